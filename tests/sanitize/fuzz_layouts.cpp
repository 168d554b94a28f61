// parse_layouts on the input's lines: a result names each layout canonically ("all" or the
// request's to_string()), no two alike, and each name parses back to the same layout.
#include "fuzz_common.hpp"

#include "greenctx/plan/pool_plan.hpp"

#include <set>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  std::vector<std::string> lines;
  std::string line;
  for (const char c : fuzz::text(data, size)) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  lines.push_back(line);
  std::vector<greenctx::layout_request> layouts;
  if (!fuzz::parses([&] { layouts = greenctx::parse_layouts(lines); }))
    return 0;
  if (layouts.size() != lines.size())
    fuzz::finding("a layout lost or made up");
  std::set<std::string> names;
  for (const auto &l : layouts) {
    if (!names.insert(l.name).second)
      fuzz::finding("two layouts named '" + l.name + "'");
    if (l.whole_device ? l.name != "all" : l.name != l.request.to_string())
      fuzz::finding("a name that is not canonical: '" + l.name + "'");
    greenctx::layout_request back;
    if (!fuzz::parses([&] { back = greenctx::parse_layout(l.name); }) || back.name != l.name)
      fuzz::finding("the name '" + l.name + "' does not parse back to itself");
  }
  return 0;
}
