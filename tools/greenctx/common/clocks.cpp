// SPDX-License-Identifier: Apache-2.0
#include "common/clocks.hpp"

#include <dlfcn.h>

namespace greenctx::cli::bench {
namespace {

// The few NVML entry points used, declared from the NVML documentation (its header is not part
// of the toolkit here). Return codes: 0 is NVML_SUCCESS. Clock types: 1 SM, 2 memory.
using nvml_device = struct nvml_device_st *;
using nvml_init_fn = int (*)();
using nvml_by_pci_fn = int (*)(const char *, nvml_device *);
using nvml_clock_fn = int (*)(nvml_device, int, unsigned *);
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;

struct nvml {
  nvml_by_pci_fn by_pci = nullptr;
  nvml_clock_fn clock = nullptr, max_clock = nullptr;
  std::string failure;
};

const nvml &load() {
  static const nvml n = [] {
    nvml out;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      out.failure = "libnvidia-ml.so.1 not found";
      return out;
    }
    auto init = reinterpret_cast<nvml_init_fn>(dlsym(lib, "nvmlInit_v2"));
    out.by_pci = reinterpret_cast<nvml_by_pci_fn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    out.clock = reinterpret_cast<nvml_clock_fn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    out.max_clock = reinterpret_cast<nvml_clock_fn>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (!init || !out.by_pci || !out.clock || !out.max_clock)
      out.failure = "NVML lacks an entry point greenctx reads";
    else if (init() != 0)
      out.failure = "nvmlInit failed";
    return out;
  }();
  return n;
}

} // namespace

nlohmann::json read_clocks(const device &dev) {
  const nvml &n = load();
  if (!n.failure.empty())
    return {{"available", false}, {"reason", n.failure}};
  nvml_device d = nullptr;
  if (n.by_pci(dev.pci_bus_id().c_str(), &d) != 0)
    return {{"available", false}, {"reason", "NVML does not know PCI " + dev.pci_bus_id()}};
  unsigned sm = 0, mem = 0, sm_max = 0, mem_max = 0;
  const bool ok = n.clock(d, nvml_clock_sm, &sm) == 0 && n.clock(d, nvml_clock_mem, &mem) == 0 &&
                  n.max_clock(d, nvml_clock_sm, &sm_max) == 0 &&
                  n.max_clock(d, nvml_clock_mem, &mem_max) == 0;
  if (!ok)
    return {{"available", false}, {"reason", "NVML clock query failed"}};
  return {{"available", true},
          {"sm_mhz", sm},
          {"mem_mhz", mem},
          {"sm_max_mhz", sm_max},
          {"mem_max_mhz", mem_max}};
}

} // namespace greenctx::cli::bench
