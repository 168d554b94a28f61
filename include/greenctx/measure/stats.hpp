// SPDX-License-Identifier: Apache-2.0
// Order statistics of samples: what every measurement reports of its series (pure code).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

/// How far the ratio of the p99s of two series of samples.size() samples moves when both come
/// from what `samples` came from: the 97.5th percentile of p99(a) / p99(b) over `resamples` pairs
/// of bootstrap resamples a, b of `samples` (drawn with replacement). A p99 ratio below it is no
/// difference this many samples can show. Deterministic: the generator (a 64-bit linear
/// congruential one, the same on every platform) starts from a fixed seed. 0 for no samples.
inline double p99_ratio_noise(const std::vector<double> &samples, unsigned resamples = 1000) {
  if (samples.empty() || resamples == 0)
    return 0;
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  const auto pick = [&] { // the high bits of an LCG step, scaled to an index
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 32) * samples.size() >> 32);
  };
  std::vector<double> resample(samples.size()), ratios;
  ratios.reserve(resamples);
  const auto p99_of_resample = [&] {
    for (double &x : resample)
      x = samples[pick()];
    std::sort(resample.begin(), resample.end());
    return percentile_sorted(resample, 0.99);
  };
  for (unsigned i = 0; i < resamples; ++i) {
    const double a = p99_of_resample(), b = p99_of_resample();
    ratios.push_back(b > 0 ? a / b : 1);
  }
  std::sort(ratios.begin(), ratios.end());
  return percentile_sorted(ratios, 0.975);
}

} // namespace greenctx::measure
