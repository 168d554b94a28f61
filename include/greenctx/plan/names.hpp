// SPDX-License-Identifier: Apache-2.0
// Choices people make by name from a fixed set (bench's --ops, --levels and --placements, the
// Python module's ops and levels): each entry one of the names, each named once. Header-only and
// pure.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx {

/// The values of `all` that `entries` name (`name_of(x)` is x's name), in the entries' order. An
/// entry that names none of them is refused by `api` (request_error) saying `what`, the names
/// there are and then `hint`; one named twice is refused too.
template <class T, std::size_t N, class Entries, class NameOf>
std::vector<T> pick_by_name(const Entries &entries, const char *api, std::string_view what,
                            const T (&all)[N], NameOf name_of, std::string_view hint = {}) {
  std::string known;
  for (const T &x : all)
    known += (known.empty() ? "" : ", ") + std::string(name_of(x));
  std::vector<T> out;
  for (const auto &entry : entries) {
    const std::string_view name(entry);
    const T *it = std::find_if(std::begin(all), std::end(all),
                               [&](const T &x) { return name == name_of(x); });
    if (it == std::end(all))
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          std::string(what) + ": '" + std::string(name) + "' is not one of " +
                              known + std::string(hint));
    if (std::find(out.begin(), out.end(), *it) != out.end())
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          std::string(what) + ": '" + std::string(name) +
                              "' is named twice: name each once");
    out.push_back(*it);
  }
  return out;
}

} // namespace greenctx
