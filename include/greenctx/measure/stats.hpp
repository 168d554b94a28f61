// SPDX-License-Identifier: Apache-2.0
// Order statistics of samples: what every measurement reports of its series (pure code).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace greenctx::measure {

struct summary {
  std::size_t count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double stdev = 0; ///< sample standard deviation (0 for fewer than 2 samples)
  double noise = 0; ///< stdev / mean: nvbench's relative noise (0 when the mean is 0)
};

/// Percentile q in [0, 1] of sorted samples, by linear interpolation between closest ranks.
inline double percentile_sorted(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

/// A distribution-free interval, at about 95% confidence, for the q-quantile of what the sorted
/// samples were drawn from: the samples at ranks n q -+ 1.96 sqrt(n q (1 - q)) (the normal
/// approximation of the binomial count of samples below the quantile), clamped to the samples.
/// With few samples the high end is the largest sample: the p99 of 300 samples is known only to
/// lie between the 293rd and the largest.
struct interval {
  double low = 0, high = 0;
};
inline interval quantile_interval(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return {};
  const double n = static_cast<double>(sorted.size());
  const double half = 1.96 * std::sqrt(n * q * (1 - q));
  const auto at_rank = [&](double rank) { // 1-based
    return sorted[static_cast<std::size_t>(std::clamp(rank, 1.0, n)) - 1];
  };
  return {at_rank(std::floor(n * q - half)), at_rank(std::ceil(n * q + half))};
}

/// quantile_interval of samples in any order.
inline interval quantile_interval_of(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return quantile_interval(samples, q);
}

inline summary summarize(std::vector<double> samples) {
  summary s;
  s.count = samples.size();
  if (samples.empty())
    return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = percentile_sorted(samples, 0.50);
  s.p90 = percentile_sorted(samples, 0.90);
  s.p99 = percentile_sorted(samples, 0.99);
  double total = 0;
  for (double v : samples)
    total += v;
  s.mean = total / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double squares = 0;
    for (double v : samples)
      squares += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(samples.size() - 1));
  }
  s.noise = s.mean != 0 ? s.stdev / s.mean : 0;
  return s;
}

} // namespace greenctx::measure
