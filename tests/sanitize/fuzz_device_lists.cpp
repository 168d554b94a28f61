// SPDX-License-Identifier: Apache-2.0
// The parser of `--device all|N|N,M` (bench, info, verify, tune --comm) on the input as text, and
// what it gives checked against a driver's count of GPUs (resolve_device_list) and as the one GPU
// of a one-GPU command (one_device). A list is "all" (nullopt) only for the text "all"; otherwise
// its ordinals are from 0 to INT_MAX, none twice, and written back with commas they parse to the
// same list. Resolved against 0 to 3 GPUs, it is refused with a message or gives ordinals below
// the count; one_device gives the list's one ordinal or refuses.
#include "fuzz_common.hpp"

#include "common/build_commit.hpp"
#include "common/cli_common.hpp"

#include <algorithm>
#include <climits>
#include <string>

// cli_common.cpp stamps results with the commit greenctx was built from, which the CLI's build
// generates; this tier has no such step.
const char *greenctx::cli::build_commit() noexcept {
  return "fuzz";
}

namespace {

// A call that may refuse: a greenctx error (request_error or the no-device error) with a message.
template <class F> bool gives(F &&f) {
  try {
    f();
    return true;
  } catch (const greenctx::error &e) {
    if (std::string_view(e.what()).empty())
      fuzz::finding("a refusal without a message");
    return false;
  } catch (const std::exception &e) {
    fuzz::finding(std::string("an exception other than greenctx's errors: ") + e.what());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  const std::string_view text = fuzz::text(data, size);
  std::optional<std::vector<int>> list;
  if (!fuzz::parses([&] { list = greenctx::cli::parse_device_list(text, "fuzz"); }))
    return 0;
  if (!list) {
    if (text != "all")
      fuzz::finding("'all' given for another text");
  } else {
    if (list->empty())
      fuzz::finding("an empty list accepted");
    std::string joined;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const int d = (*list)[i];
      if (d < 0)
        fuzz::finding("a negative ordinal: " + std::to_string(d));
      if (std::count(list->begin(), list->end(), d) != 1)
        fuzz::finding("an ordinal given twice was accepted");
      joined += (i ? "," : "") + std::to_string(d);
    }
    std::optional<std::vector<int>> back;
    if (!fuzz::parses([&] { back = greenctx::cli::parse_device_list(joined, "fuzz"); }) ||
        back != list)
      fuzz::finding("'" + joined + "' does not parse back to the same list");
  }
  for (int count = 0; count <= 3; ++count) {
    std::vector<int> resolved;
    if (!gives([&] { resolved = greenctx::cli::resolve_device_list(list, count, "fuzz"); }))
      continue;
    if (resolved.empty() || (list && resolved != *list))
      fuzz::finding("resolved to other GPUs than listed");
    for (int d : resolved)
      if (d < 0 || d >= count)
        fuzz::finding("resolved to GPU " + std::to_string(d) + " of " + std::to_string(count));
  }
  int one = -1;
  const std::string as_text(text);
  if (gives([&] { one = greenctx::cli::one_device(as_text, 7, "fuzz", "one GPU only"); })) {
    if (as_text.empty() ? one != 7 : !(list && list->size() == 1 && list->front() == one))
      fuzz::finding("one_device gave another GPU than the text names");
  }
  return 0;
}
