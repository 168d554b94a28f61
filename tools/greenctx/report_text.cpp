#include "report_text.hpp"

namespace greenctx::cli {

std::string xml_escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

nlohmann::json summary_json(const summary &s) {
  return {{"count", s.count}, {"min", s.min},     {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},     {"max", s.max},
          {"mean", s.mean},   {"stdev", s.stdev}, {"noise", s.noise}};
}

} // namespace greenctx::cli
