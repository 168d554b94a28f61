// SPDX-License-Identifier: Apache-2.0
// parse_group_params: a result is a non-empty list whose fields written back in the CLI's syntax
// parse to the same list; the rules (apply_group_defaults on an H200's limits) then either accept
// the groups or refuse them with a message, and every accepted group has no sm_count problem
// unless it is a discovery (0) or backfill group.
#include "fuzz_common.hpp"

#include "greenctx/plan/group_params.hpp"

#include <string>
#include <vector>

namespace {

std::string cli_syntax(const std::vector<greenctx::sm_group_params> &groups) {
  std::string s;
  for (const auto &g : groups) {
    if (!s.empty())
      s += ' ';
    s += std::to_string(g.sm_count);
    if (g.coscheduled_sm_count)
      s += ":cosched=" + std::to_string(g.coscheduled_sm_count);
    if (g.preferred_coscheduled_sm_count)
      s += ":pref=" + std::to_string(g.preferred_coscheduled_sm_count);
    if (g.flags & greenctx::sm_group_backfill)
      s += ":backfill";
  }
  return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  std::vector<greenctx::sm_group_params> groups;
  if (!fuzz::parses([&] { groups = greenctx::parse_group_params(fuzz::text(data, size)); }))
    return 0;
  if (groups.empty())
    fuzz::finding("an empty list of groups accepted");
  for (const auto &g : groups)
    if (g.flags & ~greenctx::sm_group_backfill)
      fuzz::finding("a flag other than backfill from the text");
  const std::string again = cli_syntax(groups);
  std::vector<greenctx::sm_group_params> back;
  if (!fuzz::parses([&] { back = greenctx::parse_group_params(again); }))
    fuzz::finding("'" + again + "' does not parse");
  if (back != groups)
    fuzz::finding("'" + again + "' parses to other groups");
  // The H200: 132 SMs, units of 8, CC 9.0.
  const greenctx::group_limits limits = greenctx::make_group_limits(132, {8, 8}, 9);
  if (fuzz::parses([&] { greenctx::apply_group_defaults(groups, limits); }))
    for (const auto &g : groups)
      if (g.sm_count != 0 && !(g.flags & greenctx::sm_group_backfill) &&
          !greenctx::sm_count_problem(g, limits).empty())
        fuzz::finding("a group accepted whose count breaks the rule: " + greenctx::to_string(g));
  return 0;
}
