// greenctx bench --comm: the report (markdown, JSON, CSV, SVG) of recorded samples.
#include "bench/comm.hpp"
#include "report/json.hpp"
#include "report/stats.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace greenctx::cli::bench::comm {
namespace {

std::string us(double v) {
  return fmt::format("{:.1f}", v);
}

// A field of the environment, "?" where it is missing (or the environment is not an object).
std::string field(const nlohmann::json &env, const char *key) {
  return env.is_object() && env.contains(key) && env[key].is_string() ? env[key].get<std::string>()
                                                                      : "?";
}

std::string comm_sms_text(const point &p) {
  if (p.comm_sms.empty())
    return p.m.on_partition() ? "?" : "all";
  const auto [lo, hi] = std::minmax_element(p.comm_sms.begin(), p.comm_sms.end());
  return (*lo == *hi ? std::to_string(*lo) : fmt::format("{}-{}", *lo, *hi)) +
         (p.confined == false ? " (NOT confined)" : "");
}

std::vector<const point *> points_of(const results &r, std::size_t bytes) {
  std::vector<const point *> out;
  for (const auto &p : r.points)
    if (p.bytes == bytes)
      out.push_back(&p);
  return out;
}

constexpr const char *one_gpu_test_warning =
    "**One-GPU test run (GREENCTX_COMM_ONE_GPU_TEST): a one-rank NCCL operation stands in for "
    "the all-reduce and communicates nothing, so these numbers check the tool and answer "
    "nothing.**";

bool one_gpu_test(const nlohmann::json &env) {
  return env.is_object() && env.value("one_gpu_test", false);
}

} // namespace

std::string markdown(const results &r, const nlohmann::json &env) {
  std::string out = fmt::format(
      "# greenctx bench --comm: NCCL all-reduce next to a GEMM loop\n\n"
      "{} GPUs ({}), {}; driver CUDA {}; NCCL {}; {}\n"
      "{} timed all-reduces per point after {} warm-up; GEMM n={} bf16; time = the slowest "
      "GPU's event time of each all-reduce; bus bandwidth = size/time * 2(n-1)/n.\n"
      "GEMM alone on all SMs: {:.1f} TFLOP/s per GPU.\n",
      r.gpus, fmt::join(r.devices, ","), field(env, "gpu"), field(env, "driver_version"),
      field(env, "nccl_version"), field(env, "date"), r.iterations, r.warmup, r.gemm_n,
      r.gemm_alone_tflops);
  if (one_gpu_test(env))
    out += fmt::format("\n{} (operation: {})\n", one_gpu_test_warning,
                       field(env, "one_gpu_test_operation"));
  const std::vector<column> columns = {
      {"mode", align::left},      {"all-reduce SMs", align::right}, {"p50 us", align::right},
      {"p99 us", align::right},   {"busbw GB/s", align::right},     {"GEMM TFLOP/s", align::right},
      {"GEMM kept", align::right}};
  for (const std::size_t bytes : r.sizes) {
    std::vector<row> rows;
    for (const point *p : points_of(r, bytes)) {
      const std::string gemm =
          p->m.kind == mode_kind::alone ? "-" : fmt::format("{:.1f}", p->gemm_tflops);
      const std::string kept =
          p->m.kind == mode_kind::alone || r.gemm_alone_tflops <= 0
              ? "-"
              : fmt::format("{:.0f}%", 100 * p->gemm_tflops / r.gemm_alone_tflops);
      if (p->allreduce_us.empty()) {
        rows.push_back(
            {p->m.name(), comm_sms_text(*p), "-", "-", "-", "-", "failed: " + p->failure});
        continue;
      }
      const summary s = summarize(p->allreduce_us);
      rows.push_back({p->m.name(), comm_sms_text(*p), us(s.p50), us(s.p99),
                      fmt::format("{:.1f}", bus_bandwidth_gbs(bytes, s.p50, r.gpus)), gemm, kept});
    }
    out += fmt::format("\n## {}\n\n{}", format_bytes(bytes), markdown_table(columns, rows));
  }
  std::string checks;
  for (const mode &m : all_modes(r.ks))
    for (const auto &p : r.points)
      if (p.m == m && !p.confinement.empty()) {
        checks += fmt::format("- {}: {}\n", p.m.name(), p.confinement);
        break;
      }
  if (!checks.empty())
    out += "\n## Does the all-reduce stay on its k SMs?\n\nEach partition filled by a spin "
           "kernel, then one all-reduce launched on its stream:\n\n" +
           checks;
  out += fmt::format("\n## How many SMs the all-reduce needs\n\nThe smallest k whose all-reduce "
                     "p50 is within {:g}% of the best p50 of any mode with the GEMM running:\n\n",
                     r.tolerance_percent);
  for (const auto &a : answers(r))
    out += "- " + a.text + "\n";
  return out;
}

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  nlohmann::json j;
  j["environment"] = env;
  j["gpus"] = r.gpus;
  j["devices"] = r.devices;
  j["ks"] = r.ks;
  j["sizes"] = r.sizes;
  j["iterations"] = r.iterations;
  j["warmup"] = r.warmup;
  j["gemm_n"] = r.gemm_n;
  j["tolerance_percent"] = r.tolerance_percent;
  j["gemm_alone_tflops"] = r.gemm_alone_tflops;
  j["points"] = nlohmann::json::array();
  for (const auto &p : r.points) {
    nlohmann::json q = {{"mode", p.m.name()},
                        {"bytes", p.bytes},
                        {"gemm_tflops", p.gemm_tflops},
                        {"comm_sms", p.comm_sms},
                        {"confined", p.confined ? nlohmann::json(*p.confined) : nlohmann::json()},
                        {"confinement", p.confinement},
                        {"failure", p.failure},
                        {"allreduce_us", p.allreduce_us}};
    if (!p.allreduce_us.empty()) {
      const summary s = summarize(p.allreduce_us);
      q["p50_us"] = s.p50;
      q["p99_us"] = s.p99;
      q["busbw_gbs"] = bus_bandwidth_gbs(p.bytes, s.p50, r.gpus);
    }
    j["points"].push_back(std::move(q));
  }
  j["answers"] = nlohmann::json::array();
  for (const auto &a : answers(r))
    j["answers"].push_back({{"bytes", a.bytes},
                            {"k", a.k ? nlohmann::json(*a.k) : nlohmann::json(nullptr)},
                            {"k_mode", a.k_mode},
                            {"k_p50_us", a.k_p50_us},
                            {"best_mode", a.best_mode},
                            {"best_p50_us", a.best_p50_us},
                            {"gemm_fraction", a.gemm_fraction},
                            {"text", a.text}});
  return j;
}

point point_from_json(const nlohmann::json &q) {
  point p;
  const auto m = mode::from_name(q.at("mode").get<std::string>());
  if (!m)
    throw nlohmann::json::other_error::create(
        501, "unknown mode '" + q.at("mode").get<std::string>() + "'", &q);
  p.m = *m;
  read_to(q, "bytes", p.bytes);
  p.gemm_tflops = q.at("gemm_tflops").get<double>();
  read_to(q, "comm_sms", p.comm_sms);
  if (q.contains("confined") && !q["confined"].is_null())
    p.confined = q["confined"].get<bool>();
  p.confinement = q.value("confinement", std::string());
  p.failure = q.at("failure").get<std::string>();
  p.allreduce_us = q.at("allreduce_us").get<std::vector<double>>();
  return p;
}

results from_json(const nlohmann::json &j) {
  results r;
  read_to(j, "gpus", r.gpus);
  read_to(j, "devices", r.devices);
  read_to(j, "ks", r.ks);
  read_to(j, "sizes", r.sizes);
  read_to(j, "iterations", r.iterations);
  read_to(j, "warmup", r.warmup);
  read_to(j, "gemm_n", r.gemm_n);
  r.tolerance_percent = j.at("tolerance_percent").get<double>();
  r.gemm_alone_tflops = j.at("gemm_alone_tflops").get<double>();
  for (const auto &q : j.at("points"))
    r.points.push_back(point_from_json(q));
  return r;
}

std::string to_csv(const results &r) {
  std::string out = csv_line({"bytes", "mode", "comm_sms", "samples", "p50_us", "p99_us",
                              "busbw_gbs", "gemm_tflops", "confined", "failure"});
  for (const auto &p : r.points) {
    const summary s = summarize(p.allreduce_us);
    const bool any = !p.allreduce_us.empty();
    out += csv_line({std::to_string(p.bytes), p.m.name(), comm_sms_text(p),
                     std::to_string(p.allreduce_us.size()), any ? fmt::format("{}", s.p50) : "",
                     any ? fmt::format("{}", s.p99) : "",
                     any ? fmt::format("{}", bus_bandwidth_gbs(p.bytes, s.p50, r.gpus)) : "",
                     fmt::format("{}", p.gemm_tflops),
                     p.confined ? (*p.confined ? "yes" : "no") : "", p.failure});
  }
  return out;
}

std::string to_svg(const results &r, const nlohmann::json &env) {
  const double width = 900, left = 90, right = 200, plot_w = width - left - right;
  const double top1 = 110, h1 = 300, top2 = top1 + h1 + 90, h2 = 240, height = top2 + h2 + 60;
  static constexpr const char *palette[] = {"#2c3e50", "#c0392b", "#e67e22", "#27ae60",
                                            "#2980b9", "#8e44ad", "#16a085", "#d35400",
                                            "#7f8c8d", "#f1c40f", "#34495e", "#e84393"};
  svg::document doc(width, height);
  doc.heading(
      one_gpu_test(env) ? "greenctx bench --comm: ONE-GPU TEST RUN, these numbers answer nothing"
                        : "greenctx bench --comm: all-reduce next to a GEMM loop",
      {fmt::format("{} GPUs ({}), driver CUDA {}, NCCL {}, {}", r.gpus, field(env, "gpu"),
                   field(env, "driver_version"), field(env, "nccl_version"), field(env, "date")),
       fmt::format("all-reduce p50 of {} iterations (log scale) and GEMM TFLOP/s per GPU, "
                   "against message size",
                   r.iterations)});
  if (r.sizes.empty() || r.points.empty()) {
    doc.text(left, top1 + 20, "no samples: nothing to plot", {"#c0392b"});
    return doc.finish();
  }
  std::vector<std::size_t> sizes = r.sizes;
  std::sort(sizes.begin(), sizes.end());
  const double lx0 = std::log2(static_cast<double>(sizes.front()));
  const double lx1 = std::max(lx0 + 1, std::log2(static_cast<double>(sizes.back())));
  const auto x = [&](std::size_t b) {
    return left + plot_w * (std::log2(static_cast<double>(b)) - lx0) / (lx1 - lx0);
  };
  double t_min = 0, t_max = 0, g_max = r.gemm_alone_tflops;
  for (const auto &p : r.points) {
    g_max = std::max(g_max, p.gemm_tflops);
    if (p.allreduce_us.empty())
      continue;
    const double v = summarize(p.allreduce_us).p50;
    t_min = t_min == 0 ? v : std::min(t_min, v);
    t_max = std::max(t_max, v);
  }
  const double ly0 = std::floor(std::log10(std::max(t_min, 1e-3)));
  const double ly1 = std::max(ly0 + 1, std::ceil(std::log10(std::max(t_max, 1e-3))));
  const auto y1 = [&](double v) {
    return top1 + h1 * (1 - (std::log10(std::max(v, 1e-3)) - ly0) / (ly1 - ly0));
  };
  const double g_step = nice_step(std::max(g_max, 1.0), 5);
  const double g_top = std::ceil(std::max(g_max, 1.0) * 1.05 / g_step) * g_step;
  const auto y2 = [&](double v) { return top2 + h2 * (1 - v / g_top); };

  doc.panel_title(top1 - 12, "All-reduce p50 (us, log scale)");
  for (double e = ly0; e <= ly1 + 1e-9; e += 1)
    doc.y_tick(left, left + plot_w, y1(std::pow(10, e)), fmt::format("{:g}", std::pow(10, e)));
  doc.panel_title(top2 - 12, "GEMM TFLOP/s per GPU (dashed: alone on all SMs)");
  for (double v = 0; v <= g_top + 1e-9; v += g_step)
    doc.y_tick(left, left + plot_w, y2(v), fmt::format("{:g}", v));
  if (r.gemm_alone_tflops > 0)
    doc.line(left, left + plot_w, y2(r.gemm_alone_tflops), y2(r.gemm_alone_tflops),
             {"#555", 1, "6 4"});
  for (const auto &[top, h] : {std::pair{top1, h1}, std::pair{top2, h2}}) {
    for (const std::size_t b : sizes)
      doc.x_tick(x(b), top, top + h, top + h + 16, format_bytes(b));
    doc.line(left, left + plot_w, top + h, top + h, {"#888"});
  }
  doc.text(left + plot_w / 2, top2 + h2 + 36, "message size", {"#333", "middle"});

  std::map<std::string, std::vector<const point *>> by_mode;
  std::vector<std::string> order;
  for (const auto &p : r.points) {
    if (!by_mode.count(p.m.name()))
      order.push_back(p.m.name());
    by_mode[p.m.name()].push_back(&p);
  }
  // Colour by k (the modes without k take the first three), dash by kind: green-k solid,
  // green-ctas-k dashed, max-ctas-k dotted.
  const auto style = [&](const mode &m) -> std::pair<std::string, std::string> {
    if (m.k == 0)
      return {palette[static_cast<std::size_t>(m.kind == mode_kind::alone    ? 0
                                               : m.kind == mode_kind::shared ? 1
                                                                             : 2)],
              ""};
    const auto at = std::find(r.ks.begin(), r.ks.end(), m.k);
    const std::size_t i = 3 + static_cast<std::size_t>(at - r.ks.begin());
    return {palette[i % std::size(palette)], m.kind == mode_kind::partitioned        ? ""
                                             : m.kind == mode_kind::partitioned_ctas ? "7 4"
                                                                                     : "2 3"};
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto [color, dash] = style(by_mode[order[i]].front()->m);
    std::vector<std::pair<double, double>> t, g;
    for (const point *p : by_mode[order[i]]) {
      if (!p->allreduce_us.empty())
        t.emplace_back(x(p->bytes), y1(summarize(p->allreduce_us).p50));
      if (p->m.kind != mode_kind::alone)
        g.emplace_back(x(p->bytes), y2(p->gemm_tflops));
    }
    std::sort(t.begin(), t.end());
    std::sort(g.begin(), g.end());
    doc.series(t, color, dash);
    if (!g.empty())
      doc.series(g, color, dash);
    const double ly = top1 + 4 + 18.0 * static_cast<double>(i);
    doc.line(left + plot_w + 16, left + plot_w + 36, ly, ly, {color, 2, dash});
    doc.text(left + plot_w + 42, ly + 4, order[i]);
  }
  return doc.finish();
}

} // namespace greenctx::cli::bench::comm
