// SPDX-License-Identifier: Apache-2.0
// Reading what a child process answers in JSON (bench comm's children, verify --processes'
// pieces): whole numbers checked, never rounded or wrapped.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace greenctx::cli {

/// A whole number that fits T. Anything else is refused with nlohmann::json::type_error (302: not
/// a whole number; 8.0 too, as no count is ever written so) or out_of_range (406: out of T's
/// range), which the reader reports as a malformed answer: nlohmann's own get<T>() would round a
/// fraction, wrap a negative count and, for a float out of T's range, is undefined.
template <std::integral T>
requires(!std::same_as<T, bool>) T whole(const nlohmann::json &j) {
  if (j.is_number_unsigned()) {
    if (const auto v = j.get<std::uint64_t>(); std::in_range<T>(v))
      return static_cast<T>(v);
  } else if (j.is_number_integer()) {
    if (const auto v = j.get<std::int64_t>(); std::in_range<T>(v))
      return static_cast<T>(v);
  } else {
    throw nlohmann::json::type_error::create(
        302, std::string("a whole number was expected, not ") + j.type_name(), &j);
  }
  throw nlohmann::json::out_of_range::create(406, j.dump() + " is out of range here", &j);
}

template <class T> inline constexpr bool is_list_of_whole_numbers = false;
template <std::integral T>
inline constexpr bool is_list_of_whole_numbers<std::vector<T>> = !std::same_as<T, bool>;

/// j as a T: whole numbers, and lists of them, checked as whole() does; anything else as nlohmann
/// reads it.
template <class T> T read_as(const nlohmann::json &j) {
  if constexpr (std::integral<T> && !std::same_as<T, bool>) {
    return whole<T>(j);
  } else if constexpr (is_list_of_whole_numbers<T>) {
    if (!j.is_array())
      throw nlohmann::json::type_error::create(
          302, std::string("a list was expected, not ") + j.type_name(), &j);
    T out;
    for (const auto &x : j)
      out.push_back(read_as<typename T::value_type>(x));
    return out;
  } else {
    return j.get<T>();
  }
}

/// j[key] into `to`, read as read_as<T> reads it (a missing key: out_of_range 403).
template <class T> void read_to(const nlohmann::json &j, const char *key, T &to) {
  to = read_as<T>(j.at(key));
}

} // namespace greenctx::cli
