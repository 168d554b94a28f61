// SPDX-License-Identifier: Apache-2.0
// greenctx_pool_bench: what a pool costs to make (time, device memory, contexts, streams) and
// what switching its layout costs on the host (distribution over at least a million switches).
//
//   greenctx_pool_bench [--device N] [--layouts "16,rest;32,rest;64,rest;all"]
//                       [--switches N] [--json FILE]
//
// A switch is one atomic exchange, far below the clock's resolution, so switches are timed in
// batches of 100 (per-switch time = batch time / 100; one sample per batch); single switches are
// also timed one by one, which includes the cost of reading the clock (reported alongside).
// Exit status: 0 done, 2 bad arguments, 3 no driver or GPU, 1 any other failure.
#include <greenctx/greenctx.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct usage_error {
  std::string message;
};

struct options {
  int device = 0;
  std::vector<std::string> layouts{"16,rest", "32,rest", "64,rest", "all"};
  long long switches = 1'000'000;
  std::string json;
};

long long whole_number(const std::string &flag, const std::string &text, long long min) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < min)
    throw usage_error{flag + " takes a whole number >= " + std::to_string(min) + ", not '" + text +
                      "'"};
  return v;
}

options parse(int argc, char **argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw usage_error{a + " needs a value"};
      return argv[++i];
    };
    if (a == "--device") {
      o.device = static_cast<int>(whole_number(a, value(), 0));
    } else if (a == "--layouts") {
      o.layouts.clear();
      std::stringstream in(value());
      for (std::string item; std::getline(in, item, ';');)
        o.layouts.push_back(item);
    } else if (a == "--switches") {
      o.switches = whole_number(a, value(), 100);
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: greenctx_pool_bench [--device N] [--layouts \"16,rest;64,rest;all\"] "
                   "[--switches N (>= 100, default 1000000)] [--json FILE]\n";
      std::exit(0);
    } else {
      throw usage_error{"unknown argument '" + a + "' (see --help)"};
    }
  }
  return o;
}

struct distribution {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

distribution summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  distribution d{v.front(), at(0.5), at(0.9), at(0.99), v.back(), 0};
  for (double x : v)
    d.mean += x / static_cast<double>(v.size());
  return d;
}

std::string json_of(const distribution &d) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"min\": %.3f, \"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f, "
                "\"mean\": %.3f}",
                d.min, d.p50, d.p90, d.p99, d.max, d.mean);
  return buf;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace

int main(int argc, char **argv) try {
  const options o = parse(argc, argv);
  greenctx::device dev(o.device);
  const greenctx::driver_info drv = greenctx::query_driver();
  greenctx::pool p = greenctx::pool::create(dev, o.layouts);
  const greenctx::pool_stats &st = p.stats();
  const std::size_t n = p.layouts().size();

  // Batches of 100 switches by index, round robin over the layouts.
  constexpr int batch = 100;
  const long long batches = std::max(1LL, o.switches / batch);
  std::vector<double> per_switch;
  per_switch.reserve(static_cast<std::size_t>(batches));
  std::size_t next = 0;
  for (int warm = 0; warm < 10000; ++warm)
    p.use(next = (next + 1) % n);
  for (long long b = 0; b < batches; ++b) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < batch; ++i)
      p.use(next = (next + 1 == n ? 0 : next + 1));
    const auto t1 = clock_type::now();
    per_switch.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  // Single switches, each timed (clock reads included), and the clock alone.
  std::vector<double> single, clock_only;
  single.reserve(static_cast<std::size_t>(o.switches));
  clock_only.reserve(static_cast<std::size_t>(o.switches));
  for (long long i = 0; i < o.switches; ++i) {
    const auto t0 = clock_type::now();
    p.use(next = (next + 1 == n ? 0 : next + 1));
    const auto t1 = clock_type::now();
    single.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    const auto c0 = clock_type::now();
    const auto c1 = clock_type::now();
    clock_only.push_back(std::chrono::duration<double, std::nano>(c1 - c0).count());
  }
  // By name: the lookup among the layouts plus the exchange, in batches.
  std::vector<double> by_name;
  for (long long b = 0; b < std::max(1LL, batches / 10); ++b) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < batch; ++i)
      p.use(p.layouts()[(next = (next + 1) % n)].name);
    const auto t1 = clock_type::now();
    by_name.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
  }
  const distribution batched = summarize(per_switch), one = summarize(single),
                     clk = summarize(clock_only), named = summarize(by_name);

  std::cout << "GPU " << dev.name() << " (" << dev.sms().sm_count() << " SMs), driver CUDA "
            << greenctx::format_cuda_version(drv.version) << "\n"
            << "pool of " << st.layouts << " layouts (" << st.partitions
            << " partitions): " << st.contexts << " green contexts, " << st.streams << " streams\n"
            << "  created in " << static_cast<double>(st.creation_time.count()) / 1e6
            << " ms, device memory taken "
            << static_cast<double>(st.device_memory_bytes) / (1 << 20) << " MiB\n";
  for (const auto &l : p.layouts()) {
    std::cout << "  " << l.name << ":";
    for (const auto &part : l.parts)
      std::cout << " " << part.label() << "=" << part.sm_count << " SMs (context " << part.slot
                << ")";
    std::cout << "\n";
  }
  std::printf("switch by index, batches of %d (%lld switches): p50 %.2f ns, p99 %.2f ns, max "
              "%.2f ns\n",
              batch, batches * batch, batched.p50, batched.p99, batched.max);
  std::printf("single switch timed alone (%lld): p50 %.1f ns, p99 %.1f ns (clock alone p50 %.1f, "
              "p99 %.1f)\n",
              o.switches, one.p50, one.p99, clk.p50, clk.p99);
  std::printf("switch by name, batches of %d: p50 %.2f ns, p99 %.2f ns\n", batch, named.p50,
              named.p99);

  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f)
      throw usage_error{"cannot write --json file '" + o.json + "'"};
    std::string command;
    for (int i = 0; i < argc; ++i)
      command += (i ? " " : "") + std::string(argv[i]);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    f << "{\n  \"gpu\": " << quoted(dev.name()) << ",\n  \"sm_count\": " << dev.sms().sm_count()
      << ",\n  \"pci_bus_id\": " << quoted(dev.pci_bus_id())
      << ",\n  \"driver\": " << quoted(greenctx::format_cuda_version(drv.version))
      << ",\n  \"date\": " << quoted(date) << ",\n  \"command\": " << quoted(command)
      << ",\n  \"layouts\": [";
    for (std::size_t i = 0; i < n; ++i) {
      const auto &l = p.layouts()[i];
      f << (i ? ", " : "") << "{\"name\": " << quoted(l.name) << ", \"partitions\": [";
      for (std::size_t j = 0; j < l.parts.size(); ++j)
        f << (j ? ", " : "") << "{\"label\": " << quoted(l.parts[j].label())
          << ", \"sms\": " << l.parts[j].sm_count << ", \"context\": " << l.parts[j].slot << "}";
      f << "]}";
    }
    f << "],\n  \"creation_ms\": " << static_cast<double>(st.creation_time.count()) / 1e6
      << ",\n  \"device_memory_bytes\": " << st.device_memory_bytes
      << ",\n  \"partitions\": " << st.partitions << ",\n  \"contexts\": " << st.contexts
      << ",\n  \"streams\": " << st.streams << ",\n  \"switch_ns_batched\": {\"batch\": " << batch
      << ", \"switches\": " << batches * batch << ", \"per_switch\": " << json_of(batched)
      << "},\n  \"switch_ns_single\": {\"switches\": " << o.switches
      << ", \"timed\": " << json_of(one) << ", \"clock_alone\": " << json_of(clk)
      << "},\n  \"switch_by_name_ns_batched\": " << json_of(named)
      << ",\n  \"samples_switch_ns_batched\": [";
    for (std::size_t i = 0; i < per_switch.size(); ++i)
      f << (i ? "," : "") << per_switch[i];
    f << "]\n}\n";
    if (!f)
      throw usage_error{"writing --json file '" + o.json + "' failed"};
    std::cout << "wrote " << o.json << "\n";
  }
  return 0;
} catch (const usage_error &e) {
  std::cerr << "greenctx_pool_bench: " << e.message << "\n";
  return 2;
} catch (const greenctx::request_error &e) {
  std::cerr << "greenctx_pool_bench: " << e.what() << "\n";
  return 2;
} catch (const greenctx::error &e) {
  std::cerr << "greenctx_pool_bench: " << e.what() << "\n";
  return e.code() == CUDA_ERROR_NO_DEVICE ? 3 : 1;
} catch (const std::exception &e) {
  std::cerr << "greenctx_pool_bench: " << e.what() << "\n";
  return 1;
}
