// SPDX-License-Identifier: Apache-2.0
// What a program reads for the device's SM count, through every route it has: the runtime's
// attribute and properties, the driver's cuDeviceGetAttribute (linked directly where libcuda is
// there at build time, fetched by cudaGetDriverEntryPointByVersion, and by cuGetProcAddress from
// libcuda.so.1 opened with dlopen), and the largest cooperative grid the driver accepts, divided
// by the kernel's occupancy (the number CUDA's samples size a cooperative grid with). Knows nothing
// of greenctx: a confined program must read one count everywhere.
//
//   sm_count --out FILE [--timeout-s S]
//
// Prints only "sm_count routes agree: yes|no" on stdout (the same plain and confined); the values
// go to FILE, one "ROUTE VALUE" line each ('#' lines are notes). Exits 1 if the routes disagree or
// a call failed, 2 on bad arguments, 77 without a GPU.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "run_common.cuh"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using run_test::format;
using run_test::recorder;

constexpr int coop_threads = 1024;

__global__ void coop_probe(int *out) {
  if (out && blockIdx.x == 0 && threadIdx.x == 0)
    *out = 1;
}

using get_attribute_fn = CUresult (*)(int *, CUdevice_attribute, CUdevice);
using get_proc_fn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult *);

bool check_cu(recorder &rec, CUresult rc, const std::string &what) {
  if (rc == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  cuGetErrorName(rc, &name);
  rec.fail(what + ": " + (name ? name : std::to_string(rc)));
  return false;
}

/// The SM count by a cuDeviceGetAttribute found at run time, or -1 after recording why not.
int through(recorder &rec, get_attribute_fn fn, const char *how) {
  int v = -1;
  if (!fn) {
    rec.fail(format("%s: no cuDeviceGetAttribute", how));
    return -1;
  }
  CUresult rc = fn(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0); // CUdevice 0 is ordinal 0
  if (rc != CUDA_SUCCESS) {
    rec.fail(format("%s: cuDeviceGetAttribute returned %d", how, int(rc)));
    return -1;
  }
  return v;
}

/// cuDeviceGetAttribute through cuGetProcAddress, itself looked up in libcuda.so.1 as the CUDA
/// runtime does it.
int through_get_proc_address(recorder &rec) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    rec.fail(format("dlopen(libcuda.so.1): %s", dlerror()));
    return -1;
  }
  auto get_proc = reinterpret_cast<get_proc_fn>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    rec.fail("dlsym(cuGetProcAddress_v2) found nothing");
    return -1;
  }
  void *fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (get_proc("cuDeviceGetAttribute", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
          CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    rec.fail("cuGetProcAddress(cuDeviceGetAttribute) failed");
    return -1;
  }
  return through(rec, reinterpret_cast<get_attribute_fn>(fn), "cuGetProcAddress");
}

/// True when a cooperative launch of `blocks` blocks is accepted (and runs); false when the driver
/// says it is too large; any other error is recorded.
bool coop_accepted(recorder &rec, unsigned blocks) {
  int *none = nullptr;
  void *args[] = {&none};
  const cudaError_t rc = cudaLaunchCooperativeKernel(reinterpret_cast<void *>(coop_probe),
                                                     dim3(blocks), dim3(coop_threads), args);
  if (rc == cudaErrorCooperativeLaunchTooLarge) {
    cudaGetLastError(); // not sticky; cleared for the next launch
    return false;
  }
  return rec.check(rc, format("cudaLaunchCooperativeKernel(%u blocks)", blocks)) &&
         rec.check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (cooperative probe)");
}

/// The largest cooperative grid the driver accepts divided by the occupancy, or -1. Notes go to
/// `notes` (written to the file as comments).
int through_cooperative_limit(recorder &rec, std::vector<std::string> &notes) {
  int per_sm = 0;
  if (!rec.check(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop_probe, coop_threads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor") ||
      per_sm < 1)
    return -1;
  unsigned lo = 1, hi = 1u << 16; // lo is accepted, hi is not (checked): binary search between
  if (!coop_accepted(rec, lo) || coop_accepted(rec, hi)) {
    rec.fail("cooperative launches: 1 block refused or 65536 blocks accepted");
    return -1;
  }
  while (hi - lo > 1 && rec.ok()) {
    const unsigned mid = lo + (hi - lo) / 2;
    (coop_accepted(rec, mid) ? lo : hi) = mid;
  }
  notes.push_back(format("# cooperative: %d blocks of %d threads per SM, largest grid accepted %u",
                         per_sm, coop_threads, lo));
  if (lo % unsigned(per_sm) != 0) {
    rec.fail(format("the largest cooperative grid (%u) is not a multiple of the occupancy (%d)", lo,
                    per_sm));
    return -1;
  }
  return int(lo / unsigned(per_sm));
}

} // namespace

int main(int argc, char **argv) {
  std::string out;
  double timeout_s = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--timeout-s" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: sm_count --out FILE [--timeout-s S]\n");
      return 2;
    }
  }
  if (out.empty() || timeout_s <= 0) {
    std::fprintf(stderr, "sm_count: --out FILE is required, --timeout-s must be positive\n");
    return 2;
  }
  if (!run_test::have_gpu("sm_count"))
    return 77;
  run_test::watchdog dog("sm_count", timeout_s);
  recorder rec("sm_count");
  std::vector<std::pair<std::string, int>> routes;
  std::vector<std::string> notes;
  int v = -1;
  if (rec.check(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0),
                "cudaDeviceGetAttribute"))
    routes.emplace_back("cudaDeviceGetAttribute", v);
  cudaDeviceProp prop{};
  if (rec.check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
    routes.emplace_back("cudaGetDeviceProperties", prop.multiProcessorCount);
#ifdef SM_COUNT_LINKED_DRIVER
  CUdevice dev = 0;
  if (check_cu(rec, cuInit(0), "cuInit") && check_cu(rec, cuDeviceGet(&dev, 0), "cuDeviceGet") &&
      check_cu(rec, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
               "cuDeviceGetAttribute (linked)"))
    routes.emplace_back("cuDeviceGetAttribute_linked", v);
#else
  notes.push_back("# cuDeviceGetAttribute_linked: built without libcuda");
#endif
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  dog.at("cudaGetDriverEntryPointByVersion");
  if (rec.check(cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &fn, 12000,
                                                 cudaEnableDefault, &status),
                "cudaGetDriverEntryPointByVersion") &&
      rec.expect(status == cudaDriverEntryPointSuccess, "cuDeviceGetAttribute entry point absent"))
    routes.emplace_back("cudaGetDriverEntryPoint",
                        through(rec, reinterpret_cast<get_attribute_fn>(fn), "entry point"));
  dog.at("cuGetProcAddress");
  routes.emplace_back("cuGetProcAddress", through_get_proc_address(rec));
  dog.at("cooperative launches");
  routes.emplace_back("cooperative_launch_limit", through_cooperative_limit(rec, notes));

  std::ofstream f(out);
  for (const auto &[name, value] : routes)
    f << name << ' ' << value << '\n';
  for (const auto &note : notes)
    f << note << '\n';
  f.close();
  if (!f)
    rec.fail("cannot write " + out);
  bool agree = !routes.empty();
  for (const auto &[name, value] : routes) {
    std::fprintf(stderr, "sm_count: %s = %d\n", name.c_str(), value);
    agree = agree && value == routes.front().second && value > 0;
  }
  std::printf("sm_count routes agree: %s\n", agree && rec.ok() ? "yes" : "no");
  if (!rec.ok())
    std::fprintf(stderr, "sm_count: FAILED (%s)\n", rec.summary().c_str());
  return agree && rec.ok() ? 0 : 1;
}
