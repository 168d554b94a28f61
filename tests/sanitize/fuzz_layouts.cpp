// SPDX-License-Identifier: Apache-2.0
// parse_layouts on the input's lines: a result names each layout canonically ("all" or the
// request's to_string()), no two alike, and each name parses back to the same layout. Then the
// pool's common piece on an H200 and on an Ampere GPU: none, or one that is at least the minimum
// partition, divides every layout's own piece, and plans every layout that plans on its own.
#include "fuzz_common.hpp"

#include "greenctx/plan/pool_plan.hpp"

#include <optional>
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
  struct gpu {
    unsigned sms;
    greenctx::granularity grain;
  };
  for (const gpu g : {gpu{132, {8, 8}}, gpu{108, {4, 2}}}) {
    const unsigned piece = greenctx::pool_piece_size(layouts, g.sms, g.grain);
    if (piece != 0 && piece < g.grain.min_partition)
      fuzz::finding("a common piece of " + std::to_string(piece) + " SMs, below the minimum");
    for (const auto &l : layouts) {
      std::optional<greenctx::partition_plan> own;
      if (!fuzz::parses([&] { own = greenctx::plan_partitions(l.request, g.sms, g.grain); }) ||
          own->groups == 0 || piece == 0)
        continue;
      if (own->piece_size % piece != 0)
        fuzz::finding("the common piece " + std::to_string(piece) + " does not divide the piece " +
                      std::to_string(own->piece_size) + " of '" + l.name + "'");
      std::optional<greenctx::partition_plan> shared;
      if (!fuzz::parses(
              [&] { shared = greenctx::plan_partitions(l.request, g.sms, g.grain, {}, piece); }))
        fuzz::finding("'" + l.name + "' plans alone but not with the common piece");
      else if (shared->piece_size != piece)
        fuzz::finding("'" + l.name + "' planned with another piece than the one given");
    }
  }
  return 0;
}
