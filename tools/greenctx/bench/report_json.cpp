// The JSON file of `greenctx bench` (--json, --from): written and read back.
#include "bench/report.hpp"
#include "report/json.hpp"

namespace greenctx::cli::bench {

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  nlohmann::json j;
  j["environment"] = env;
  const auto &c = r.cfg;
  j["config"] = {{"background", name(c.background)},
                 {"critical", name(c.critical)},
                 {"critical_sms", c.critical_sms},
                 {"samples", c.samples},
                 {"warmup", c.warmup},
                 {"rounds", c.rounds},
                 {"gap_us", c.gap.count()},
                 {"critical_blocks", c.critical_blocks},
                 {"critical_block_us", c.critical_block_time.count()},
                 {"critical_gemm_n", c.critical_gemm_n},
                 {"background_block_us", c.background_block_time.count()},
                 {"background_waves", c.background_waves},
                 {"memory_bytes", c.memory_bytes},
                 {"gemm_n", c.gemm_n},
                 {"rate_window_ms", c.rate_window.count()}};
  j["split"] = {{"device_sms", r.device_sms},
                {"critical_sms", r.critical_sms_obtained},
                {"background_sms", r.background_sms_obtained}};
  const auto rate_json = [&](const background_rate &b) {
    return nlohmann::json{
        {"work", b.work},           {"seconds", b.seconds},
        {"rate", b.rate()},         {"rate_display", b.rate() / r.background_unit_scale},
        {"of_full", of_full(r, b)}, {"of_sm_share", of_full(r, b) / sm_share(r)}};
  };
  j["background"] = {{"unit", r.background_unit},
                     {"unit_scale", r.background_unit_scale},
                     {"alone_full", rate_json(r.background_full)},
                     {"alone_share", rate_json(r.background_share)},
                     {"sm_share", sm_share(r)},
                     {"quantization", r.quantization}};
  for (const auto &p : r.placements) {
    nlohmann::json pj{{"name", p.name}, {"description", p.description}, {"trap", p.trap}};
    pj["critical"] = {{"host_us", summary_json(p.critical->host)},
                      {"gpu_us", summary_json(p.critical->gpu)},
                      {"start_delay_us", summary_json(p.critical->start_delay)},
                      {"samples",
                       {{"host_us", p.critical->host_us},
                        {"gpu_us", p.critical->gpu_us},
                        {"start_delay_us", p.critical->start_delay_us}}}};
    if (p.background)
      pj["background"] = rate_json(*p.background);
    j["placements"].push_back(pj);
  }
  for (const auto &t : evaluate_targets(r))
    j["targets"].push_back({{"name", t.name},
                            {"rule", t.rule},
                            {"value", t.available ? nlohmann::json(t.value) : nlohmann::json()},
                            {"limit", t.limit},
                            {"at_most", t.at_most},
                            {"met", t.met()}});
  return j;
}

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

} // namespace greenctx::cli::bench
