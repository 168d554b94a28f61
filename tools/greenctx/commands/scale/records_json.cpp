// The JSON file of `greenctx scale` (--json, --from): written and read back.
#include "report/json.hpp"
#include "commands/scale/records.hpp"

#include "common/process.hpp"

namespace greenctx::cli::scale {
namespace {

nlohmann::json run_json(const run_record &r) {
  nlohmann::json j{{"repeat", r.repeat},
                   {"wall_s", r.wall_s},
                   {"figure", optional_json(r.figure)},
                   {"exit_code", r.exit_code},
                   {"signal", r.signal},
                   {"end", process::describe({r.exit_code, r.signal})},
                   {"cuda_used", r.cuda_used},
                   {"confined_devices", r.confined_devices},
                   {"green_contexts", r.green_contexts},
                   {"problems", r.problems}};
  if (!r.no_figure.empty())
    j["no_figure"] = r.no_figure;
  return j;
}

run_record run_from_json(const nlohmann::json &j, int device, const metric &m) {
  run_record r;
  read_to(j, "repeat", r.repeat);
  r.wall_s = j.at("wall_s");
  if (const auto f = j.find("figure"); f != j.end()) {
    if (!f->is_null())
      r.figure = f->get<double>();
  } else if (m.kind == metric_kind::wall) {
    r.figure = r.wall_s; // written before --metric: the figure was the wall time
  }
  r.no_figure = j.value("no_figure", "");
  read_to(j, "exit_code", r.exit_code);
  read_to(j, "signal", r.signal);
  r.cuda_used = j.at("cuda_used");
  if (const auto old = j.find("confined_threads");
      old != j.end() && !j.contains("green_contexts")) {
    // Written before the confined_devices report: threads with a green context on `device`.
    r.green_contexts = whole<unsigned>(*old);
    if (r.green_contexts > 0)
      r.confined_devices = {device};
  } else {
    read_to(j, "confined_devices", r.confined_devices);
    read_to(j, "green_contexts", r.green_contexts);
  }
  r.problems = j.at("problems").get<std::vector<std::string>>();
  return r;
}

nlohmann::json metric_json(const metric &m) {
  const std::string spec = m.spec();
  nlohmann::json j{{"kind", spec.substr(0, spec.find(':'))}, // wall, gpu-time, regex, json
                   {"spec", spec},
                   {"unit", m.unit},
                   {"higher_is_better", m.direction == better::higher},
                   {"description", m.description()}};
  if (m.kind == metric_kind::regex)
    j["pattern"] = m.source;
  if (m.kind == metric_kind::json)
    j["key"] = m.source;
  return j;
}

metric metric_from_json(const nlohmann::json &j) {
  // An unknown kind throws out_of_range ("key 'x' not found"), as a missing field does.
  static const nlohmann::json kinds = {{"wall", metric_kind::wall},
                                       {"gpu-time", metric_kind::gpu_time},
                                       {"regex", metric_kind::regex},
                                       {"json", metric_kind::json}};
  metric m;
  m.kind = kinds.at(j.at("kind").get<std::string>()).get<metric_kind>();
  if (m.kind == metric_kind::regex)
    m.source = j.at("pattern");
  if (m.kind == metric_kind::json)
    m.source = j.at("key");
  m.unit = j.at("unit");
  m.direction = j.at("higher_is_better").get<bool>() ? better::higher : better::lower;
  return m;
}

} // namespace

nlohmann::json to_json(const results &r, const nlohmann::json &env) {
  const auto sums = summarize(r);
  nlohmann::json j;
  j["environment"] = env;
  j["program"] = r.program;
  j["metric"] = metric_json(r.measure);
  std::vector<unsigned> counts;
  for (const auto &p : r.points)
    if (!p.baseline)
      counts.push_back(p.sms);
  j["config"] = {{"device", r.device},
                 {"device_sms", r.device_sms},
                 {"ignore_coscheduling", r.ignore_coscheduling},
                 {"repeat", r.repeat},
                 {"warmup", r.warmup},
                 {"warmup_sms", r.warmup_sms},
                 {"sms", counts},
                 {"sm_count_told", r.real_sm_count ? "device" : "partition"}};
  j["warmups"] = nlohmann::json::array();
  for (const auto &w : r.warmups)
    j["warmups"].push_back(run_json(w));
  j["points"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const auto &p = r.points[i];
    nlohmann::json pj{{"sms", p.sms},
                      {"unconfined", p.baseline},
                      {"samples", p.samples()},
                      {"summary", summary_json(sums[i].figure)},
                      {"samples_s", p.wall_samples()},
                      {"summary_s", summary_json(sums[i].wall)},
                      {"speedup_vs_smallest", optional_json(sums[i].vs_smallest)},
                      {"speedup_vs_unconfined", optional_json(sums[i].vs_baseline)},
                      {"status", sums[i].status}};
    pj["runs"] = nlohmann::json::array();
    for (const auto &run : p.runs)
      pj["runs"].push_back(run_json(run));
    j["points"].push_back(pj);
  }
  j["complete"] = r.complete();
  j["failure"] = r.complete() ? nlohmann::json(nullptr) : nlohmann::json(r.failure);
  return j;
}

results from_json(const nlohmann::json &j) {
  results r;
  r.program = j.at("program").get<std::vector<std::string>>();
  if (const auto m = j.find("metric"); m != j.end())
    r.measure = metric_from_json(*m);
  const auto &c = j.at("config");
  read_to(c, "device", r.device);
  read_to(c, "device_sms", r.device_sms);
  r.ignore_coscheduling = c.at("ignore_coscheduling");
  read_to(c, "repeat", r.repeat);
  read_to(c, "warmup", r.warmup);
  read_to(c, "warmup_sms", r.warmup_sms);
  // Before the preload library told programs their partition's SM count, they saw the device's.
  r.real_sm_count = c.value("sm_count_told", "device") == "device";
  for (const auto &w : j.at("warmups"))
    r.warmups.push_back(run_from_json(w, r.device, r.measure));
  for (const auto &pj : j.at("points")) {
    point p;
    read_to(pj, "sms", p.sms);
    p.baseline = pj.at("unconfined");
    for (const auto &run : pj.at("runs"))
      p.runs.push_back(run_from_json(run, r.device, r.measure));
    r.points.push_back(std::move(p));
  }
  if (!j.at("failure").is_null())
    r.failure = j.at("failure");
  return r;
}

} // namespace greenctx::cli::scale
