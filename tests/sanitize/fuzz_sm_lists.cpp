// SPDX-License-Identifier: Apache-2.0
// The parser of SM-count lists (scale's --sms, bench's --comm-sms and --shrink-to) on the input as
// text, under each option's rules. A result is not empty, each count is from 1 to the rules' most,
// none twice, in increasing order where the rules ask it, and the counts written back with commas
// parse to the same list.
#include "fuzz_common.hpp"

#include "common/sm_list_option.hpp"

#include <algorithm>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  using greenctx::cli::sm_list_rules;
  static const sm_list_rules rules[] = {{"fuzz", "--sms", "e.g. --sms 8,16", 1u << 20, true},
                                        {"fuzz", "--comm-sms", "e.g. 8,16", 4096, false}};
  const std::string_view text = fuzz::text(data, size);
  for (const sm_list_rules &r : rules) {
    std::vector<unsigned> counts;
    if (!fuzz::parses([&] { counts = greenctx::cli::parse_sm_list(text, r); }))
      continue;
    if (counts.empty())
      fuzz::finding("an empty list accepted");
    std::string joined;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0 || counts[i] > r.max)
        fuzz::finding("a count outside 1.." + std::to_string(r.max) + ": " +
                      std::to_string(counts[i]));
      if (std::count(counts.begin(), counts.end(), counts[i]) != 1)
        fuzz::finding("a count given twice was accepted");
      if (r.increasing && i > 0 && counts[i] <= counts[i - 1])
        fuzz::finding("a list out of order was accepted");
      joined += (i ? "," : "") + std::to_string(counts[i]);
    }
    std::vector<unsigned> back;
    if (!fuzz::parses([&] { back = greenctx::cli::parse_sm_list(joined, r); }) || back != counts)
      fuzz::finding("'" + joined + "' does not parse back to the same counts");
  }
  return 0;
}
