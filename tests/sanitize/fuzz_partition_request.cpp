// SPDX-License-Identifier: Apache-2.0
// parse_partition_request: a result has positive counts, "rest" at most once and last (the
// struct's flag), and its to_string() parses back to the same request.
#include "fuzz_common.hpp"

#include "greenctx/plan/partition_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  greenctx::partition_request r;
  if (!fuzz::parses([&] { r = greenctx::parse_partition_request(fuzz::text(data, size)); }))
    return 0;
  if (r.counts.empty() && !r.rest)
    fuzz::finding("a request with no partition");
  for (unsigned c : r.counts)
    if (c == 0)
      fuzz::finding("a count of 0 accepted");
  const std::string again = r.to_string();
  greenctx::partition_request back;
  if (!fuzz::parses([&] { back = greenctx::parse_partition_request(again); }))
    fuzz::finding("to_string() gave '" + again + "', which does not parse");
  if (back.counts != r.counts || back.rest != r.rest)
    fuzz::finding("'" + again + "' parses to another request");
  return 0;
}
