// `greenctx bench --from` of a JSON file written before the record (schema 1, or without a
// schema: bench/results/ holds both): read back into results, which bench_record then shows.
#include "commands/bench/latency_record.hpp"
#include "report/json.hpp"

namespace greenctx::cli::bench {

results from_json(const nlohmann::json &j) {
  results r;
  const auto &c = j.at("config");
  const std::string bg = c.at("background"), crit = c.at("critical");
  r.cfg.background = bg == "memory" ? background_kind::memory
                     : bg == "gemm" ? background_kind::gemm
                                    : background_kind::spin;
  r.cfg.critical = crit == "gemm" ? critical_kind::gemm : critical_kind::kernel;
  read_to(c, "critical_sms", r.cfg.critical_sms);
  read_to(c, "samples", r.cfg.samples);
  read_to(c, "warmup", r.cfg.warmup);
  r.cfg.rounds = read_or(c, "rounds", 1u); // runs saved before rounds existed took one
  r.cfg.gap = std::chrono::microseconds(whole<long long>(c.at("gap_us")));
  read_to(c, "critical_blocks", r.cfg.critical_blocks);
  r.cfg.critical_block_time =
      std::chrono::microseconds(whole<long long>(c.at("critical_block_us")));
  read_to(c, "critical_gemm_n", r.cfg.critical_gemm_n);
  r.cfg.background_block_time =
      std::chrono::microseconds(whole<long long>(c.at("background_block_us")));
  read_to(c, "background_waves", r.cfg.background_waves);
  read_to(c, "memory_bytes", r.cfg.memory_bytes);
  read_to(c, "gemm_n", r.cfg.gemm_n);
  r.cfg.rate_window = std::chrono::milliseconds(whole<long long>(c.at("rate_window_ms")));
  const auto &split = j.at("split");
  read_to(split, "device_sms", r.device_sms);
  read_to(split, "critical_sms", r.critical_sms_obtained);
  read_to(split, "background_sms", r.background_sms_obtained);
  const auto &b = j.at("background");
  r.background_unit = b.at("unit");
  read_to(b, "unit_scale", r.background_unit_scale);
  read_to(b, "quantization", r.quantization);
  const auto rate = [](const nlohmann::json &x) {
    return background_rate{x.at("work").get<double>(), x.at("seconds").get<double>()};
  };
  r.background_full = rate(b.at("alone_full"));
  r.background_share = rate(b.at("alone_share"));
  for (const auto &p : j.at("placements")) {
    placement_result pr{p.at("name"), p.at("description"), p.at("trap"), critical_stats{},
                        std::nullopt};
    const auto &samples = p.at("critical").at("samples");
    auto &cs = *pr.critical;
    cs.host_us = samples.at("host_us").get<std::vector<double>>();
    cs.gpu_us = samples.at("gpu_us").get<std::vector<double>>();
    cs.start_delay_us = samples.at("start_delay_us").get<std::vector<double>>();
    cs.host = summarize(cs.host_us);
    cs.gpu = summarize(cs.gpu_us);
    cs.start_delay = summarize(cs.start_delay_us);
    if (p.contains("background"))
      pr.background = rate(p.at("background"));
    r.placements.push_back(std::move(pr));
  }
  return r;
}

report::record older_record(const nlohmann::json &j) {
  return bench_record(from_json(j), j.at("environment"));
}

} // namespace greenctx::cli::bench
