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
