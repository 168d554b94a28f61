// The readers behind --from (bench, bench --adaptive, bench --comm, scale, and the report model's
// records, which tune's files are) on any bytes that parse as JSON. Each reader either gives
// results or refuses with nlohmann::json::exception (the CLI turns it into "not a ... JSON file",
// exit 2) or greenctx::error; any other exception would reach the user as an unexplained message,
// and is a finding. Results must round-trip: written with to_json and read back, they write the
// same JSON again.
#include "fuzz_common.hpp"

#include "bench/adaptive.hpp"
#include "bench/comm.hpp"
#include "bench/report.hpp"
#include "report/record.hpp"
#include "scale/records.hpp"
#include "scale/report.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace {

template <class Read, class Write>
void check_reader(const char *name, const nlohmann::json &j, Read read, Write write) {
  const nlohmann::json env =
      j.is_object() ? j.value("environment", nlohmann::json::object()) : nlohmann::json::object();
  std::string first;
  try {
    first = write(read(j), env).dump();
  } catch (const nlohmann::json::exception &) {
    return; // refused: "not a ... JSON file"
  } catch (const greenctx::error &e) {
    if (std::string_view(e.what()).empty())
      fuzz::finding(std::string(name) + ": an error without a message");
    return;
  } catch (const std::exception &e) {
    fuzz::finding(std::string(name) + ": an exception the CLI does not explain: " + e.what());
  }
  std::string second;
  try {
    second = write(read(nlohmann::json::parse(first)), env).dump();
  } catch (const std::exception &e) {
    fuzz::finding(std::string(name) + ": what it wrote does not read back: " + e.what());
  }
  if (second != first)
    fuzz::finding(std::string(name) + ": written, read back and written again, it changed:\n" +
                  first + "\n" + second);
}

// A record read back must render in every format and write the same JSON again.
void check_record(const std::string &text) {
  using greenctx::cli::report::from_json;
  using greenctx::cli::report::to_json;
  const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded())
    return;
  std::string first;
  try {
    const auto r = from_json(j);
    first = to_json(r).dump();
    namespace report = greenctx::cli::report;
    (void)report::to_text(r), (void)report::to_markdown(r), (void)report::to_csv(r);
    (void)report::to_svg(r);
  } catch (const nlohmann::json::exception &) {
    return; // refused: "not a ... JSON file"
  } catch (const std::exception &e) {
    fuzz::finding(std::string("record: an exception the CLI does not explain: ") + e.what());
  }
  std::string second;
  try {
    second = to_json(from_json(nlohmann::ordered_json::parse(first))).dump();
  } catch (const std::exception &e) {
    fuzz::finding(std::string("record: what it wrote does not read back: ") + e.what());
  }
  if (second != first)
    fuzz::finding("record: written, read back and written again, it changed:\n" + first + "\n" +
                  second);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  const std::string text(fuzz::text(data, size));
  check_record(text);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    return 0; // not JSON: refused before any reader (report_saved)
  using namespace greenctx::cli;
  check_reader("bench", j, bench::from_json, [](const bench::results &r, const nlohmann::json &e) {
    return bench::to_json(r, e);
  });
  check_reader("bench --adaptive", j, bench::adaptive::from_json,
               [](const bench::adaptive::results &r, const nlohmann::json &e) {
                 return bench::adaptive::to_json(r, e);
               });
  check_reader("bench --comm", j, bench::comm::from_json,
               [](const bench::comm::results &r, const nlohmann::json &e) {
                 return bench::comm::to_json(r, e);
               });
  check_reader("scale", j, scale::from_json, [](const scale::results &r, const nlohmann::json &e) {
    const report::record rec = scale::scale_record(r, e); // what --from shows of an older file
    (void)report::to_text(rec), (void)report::to_markdown(rec), (void)report::to_csv(rec);
    (void)report::to_svg(rec), (void)report::from_json(report::to_json(rec));
    return scale::to_json(r, e);
  });
  return 0;
}
