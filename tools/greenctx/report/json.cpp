#include "report/json.hpp"

namespace greenctx::cli {

nlohmann::json summary_json(const summary &s) {
  return {{"count", s.count}, {"min", s.min},     {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},     {"max", s.max},
          {"mean", s.mean},   {"stdev", s.stdev}, {"noise", s.noise}};
}

nlohmann::json optional_json(const std::optional<double> &x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

} // namespace greenctx::cli
