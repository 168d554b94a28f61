// SPDX-License-Identifier: Apache-2.0
// The readers behind --from and behind the answers of bench comm's children, on any bytes that
// parse as JSON: the report model's reader of records (every command writes records), and a comm
// child's point. Each either gives a value or refuses with nlohmann::json::exception (the CLI turns
// it into "not a ... JSON file", exit 2) or greenctx::error; any other exception would reach the
// user as an unexplained message, and is a finding. A record must render in every format (text,
// markdown, CSV, SVG) and round-trip: written as JSON and read back, it writes the same JSON again.
#include "fuzz_common.hpp"

#include "commands/bench/comm.hpp"
#include "report/record.hpp"

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

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  const std::string text(fuzz::text(data, size));
  check_record(text);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    return 0; // not JSON: refused before any reader (read_record)
  greenctx::cli::bench::comm::point p;
  reads("comm point", [&] { p = greenctx::cli::bench::comm::point_from_json(j); });
  return 0;
}
