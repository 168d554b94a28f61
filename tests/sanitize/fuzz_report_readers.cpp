// The readers behind --from on any bytes that parse as JSON: the report model's reader of records
// (bench, bench adaptive, bench comm, scale and tune write records), and the converters of the
// files written before the record (info, verify, split, bench's three modes and scale, schema 1 and
// older). Each either
// gives a record or refuses with nlohmann::json::exception (the CLI turns it into "not a ... JSON
// file", exit 2) or greenctx::error; any other exception would reach the user as an unexplained
// message, and is a finding. A record, read or converted, must render in every format (text,
// markdown, CSV, SVG) and round-trip: written as JSON and read back, it writes the same JSON again.
// scale's results of schema 1 must round-trip through its own writer too.
#include "fuzz_common.hpp"

#include "commands/bench/adaptive.hpp"
#include "commands/bench/comm.hpp"
#include "commands/bench/latency_record.hpp"
#include "commands/info/info_record.hpp"
#include "report/record.hpp"
#include "commands/scale/records.hpp"
#include "commands/scale/scale_record.hpp"
#include "commands/split/split_record.hpp"
#include "commands/verify/verify_record.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace {

namespace report = greenctx::cli::report;

// `r` in every format, and its JSON read back to the same JSON.
void check_rendered(const std::string &name, const report::record &r) {
  std::string first;
  try {
    (void)report::to_text(r), (void)report::to_markdown(r), (void)report::to_csv(r);
    (void)report::to_svg(r);
    first = report::to_json(r).dump();
  } catch (const std::exception &e) {
    fuzz::finding(name + ": a record that does not render: " + e.what());
  }
  std::string second;
  try {
    second = report::to_json(report::from_json(nlohmann::ordered_json::parse(first))).dump();
  } catch (const std::exception &e) {
    fuzz::finding(name + ": what it wrote does not read back: " + e.what());
  }
  if (second != first)
    fuzz::finding(name + ": written, read back and written again, it changed:\n" + first + "\n" +
                  second);
}

// `read(j)` gives a value, or refuses as the CLI expects (false).
template <class Read> bool reads(const std::string &name, Read read) {
  try {
    read();
    return true;
  } catch (const nlohmann::json::exception &) {
    return false; // refused: "not a ... JSON file"
  } catch (const greenctx::error &e) {
    if (std::string_view(e.what()).empty())
      fuzz::finding(name + ": an error without a message");
    return false;
  } catch (const std::exception &e) {
    fuzz::finding(name + ": an exception the CLI does not explain: " + e.what());
  }
}

// A record as --from reads it.
void check_record(const std::string &text) {
  const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  report::record r;
  if (!j.is_discarded() && reads("record", [&] { r = report::from_json(j); }))
    check_rendered("record", r);
}

// A file written before the record, converted as --from converts it.
void check_older(const char *name, const nlohmann::json &j,
                 report::record (*convert)(const nlohmann::json &)) {
  report::record r;
  if (reads(name, [&] { r = convert(j); }))
    check_rendered(name, r);
}

// scale's results of schema 1: written with its writer and read back, the same JSON again.
void check_scale_results(const nlohmann::json &j) {
  using namespace greenctx::cli;
  const nlohmann::json env =
      j.is_object() ? j.value("environment", nlohmann::json::object()) : nlohmann::json::object();
  std::string first;
  if (!reads("scale", [&] { first = scale::to_json(scale::from_json(j), env).dump(); }))
    return;
  std::string second;
  try {
    second = scale::to_json(scale::from_json(nlohmann::json::parse(first)), env).dump();
  } catch (const std::exception &e) {
    fuzz::finding(std::string("scale: what it wrote does not read back: ") + e.what());
  }
  if (second != first)
    fuzz::finding("scale: written, read back and written again, it changed:\n" + first + "\n" +
                  second);
}

report::record older_scale(const nlohmann::json &j) {
  using namespace greenctx::cli;
  return scale::scale_record(scale::from_json(j), j.at("environment"));
}

// info, verify and split as their commands' --from convert them.
report::record older_info(const nlohmann::json &j) {
  using namespace greenctx::cli;
  return info::info_record(info::from_json(j), info::environment_from_json(j), "not recorded");
}

report::record older_verify(const nlohmann::json &j) {
  using namespace greenctx::cli;
  return verification::verify_record(verification::from_json(j),
                                     verification::environment_from_json(j));
}

report::record older_split(const nlohmann::json &j) {
  using namespace greenctx::cli;
  return split_report::split_record(split_report::from_json(j),
                                    j.value("environment", nlohmann::json::object()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  const std::string text(fuzz::text(data, size));
  check_record(text);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    return 0; // not JSON: refused before any reader (read_record)
  using namespace greenctx::cli;
  check_older("bench", j, bench::older_record);
  check_older("bench adaptive", j, bench::adaptive::older_record);
  check_older("bench comm", j, bench::comm::older_record);
  check_older("scale (schema 1)", j, older_scale);
  check_older("info", j, older_info);
  check_older("verify", j, older_verify);
  check_older("split", j, older_split);
  check_scale_results(j);
  return 0;
}
