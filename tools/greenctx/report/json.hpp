// JSON pieces every result file writes and reads the same way (bench and scale).
#pragma once

#include "report/stats.hpp"

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace greenctx::cli {

/// {"count", "min", "p50", "p90", "p99", "max", "mean", "stdev", "noise"}.
nlohmann::json summary_json(const summary &s);

/// The value, or null.
nlohmann::json optional_json(const std::optional<double> &x);

/// A whole number that fits T. Anything else is refused with nlohmann::json::type_error (302: not
/// a whole number; 8.0 too, as no count is ever written so) or out_of_range (406: out of T's
/// range), which --from reports as "not a ... JSON file": nlohmann's own get<T>() would round a
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

/// j[key] as read_as<T> reads it, or `otherwise` where j has no such key (files written before
/// the field existed).
template <class T> T read_or(const nlohmann::json &j, const char *key, T otherwise) {
  const auto it = j.find(key);
  return it == j.end() ? std::move(otherwise) : read_as<T>(*it);
}

/// `read` of each GPU of an info or verify file written before the record: each element of
/// "devices" (schema 1) or, in the files before it, the document itself (one GPU at the top level).
template <class Read> auto read_each_gpu(const nlohmann::json &j, Read read) {
  std::vector<decltype(read(j))> out;
  if (const auto it = j.find("devices"); it != j.end())
    for (const auto &d : *it)
      out.push_back(read(d));
  else
    out.push_back(read(j));
  return out;
}

} // namespace greenctx::cli
