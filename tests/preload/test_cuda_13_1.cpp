// SPDX-License-Identifier: Apache-2.0
// greenctx run --cuda-13.1 on the fake driver (CUDA 13.0): the 13.1 green-context entry points
// the preload library provides (cuDevSmResourceSplit, cuStreamGetDevResource, cuLaunchHostFunc's
// 13.1 ABI, the work-queue resource types), the driver version each caller is told, and nothing
// provided without the option. Each group runs as ctest entries of its own, with its environment.
#include "preload_fixture.hpp"

#include <cstring>

namespace {

using namespace preload_test;

// CUDA 13.1's types, which 13.0 headers lack.
struct group_params {
  unsigned smCount = 0;
  unsigned coscheduledSmCount = 0;
  unsigned preferredCoscheduledSmCount = 0;
  unsigned flags = 0;
  unsigned reserved[12] = {};
};
// The parameters as an opaque pointer, as the library declares them (callers name the type their
// own way; a call through another pointer type is what UBSan's function check reports).
using split_fn = CUresult (*)(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *,
                              unsigned, void *);
using stream_resource_fn = CUresult (*)(CUstream, CUdevResource *, int);
using host_func_13_1_fn = CUresult (*)(CUstream, CUhostFn, void *, unsigned);
constexpr int workqueue_config = 1000, workqueue = 10000;

// A resource's type as the integer it is (13.1's types are no values of the 13.0 enum).
int type_of(const CUdevResource &r) {
  int t = 0;
  std::memcpy(&t, &r, sizeof t);
  return t;
}

bool providing() {
  const char *v = std::getenv("GREENCTX_RUN_CUDA_13_1");
  return v && std::string(v) == "1";
}

#define REQUIRE_OPTION()                                                                           \
  if (!providing())                                                                                \
    GTEST_SKIP() << "runs as its own ctest entries, with GREENCTX_RUN_CUDA_13_1=1";                \
  ASSERT_NE(preload(), nullptr) << dlerror()

// Device 0's SMs as the program sees them: 132, or 16 confined.
CUdevResource device_sms() {
  CUdevResource r{};
  EXPECT_EQ(cu().resource(0, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  return r;
}

// Half the SMs, in whole units of 8: a group of several pieces that leaves room for more.
unsigned half(const CUdevResource &all) {
  return all.sm.smCount / 16 * 8;
}

// The SMs of a green context made from `r` (the fake driver's descriptor adds up its resources).
unsigned green_sms(CUdevResource *r, unsigned n) {
  auto generate = get<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  auto create = get<PFN_cuGreenCtxCreate_v12040>("cuGreenCtxCreate", 12040);
  auto resource = get<PFN_cuGreenCtxGetDevResource_v12040>("cuGreenCtxGetDevResource", 12040);
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx g = nullptr;
  CUdevResource out{};
  if (generate(&desc, r, n) != CUDA_SUCCESS || create(&g, desc, 0, 0) != CUDA_SUCCESS ||
      resource(g, &out, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return 0;
  return out.sm.smCount;
}

TEST(PreloadCuda131, TheEntryPointsAreFoundAtTheirAbiOnly) {
  REQUIRE_OPTION();
  EXPECT_NE(get<split_fn>("cuDevSmResourceSplit", 13010), nullptr);
  EXPECT_NE(get<split_fn>("cuDevSmResourceSplit", 13050), nullptr);
  EXPECT_EQ(get<split_fn>("cuDevSmResourceSplit", 13000), nullptr) << "no such ABI before 13.1";
  EXPECT_NE(get<stream_resource_fn>("cuStreamGetDevResource", 13010), nullptr);
  EXPECT_NE(get<stream_resource_fn>("cuStreamGetDevResource", 13010, true), nullptr);
  EXPECT_NE(get<host_func_13_1_fn>("cuLaunchHostFunc", 13010), nullptr);
  EXPECT_EQ(get<void *>("cuGraphGetId", 13010), nullptr) << "other 13.1 entry points stay absent";
  EXPECT_EQ(dlsym(preload(), "cuDevSmResourceSplit") != nullptr, true) << "and as a symbol";
}

TEST(PreloadCuda131, SplitsGroupsOfTheirSizesAndTheRemainder) {
  REQUIRE_OPTION();
  auto split = get<split_fn>("cuDevSmResourceSplit", 13010);
  ASSERT_NE(split, nullptr);
  const CUdevResource all = device_sms();
  const unsigned total = all.sm.smCount, first = half(all);
  group_params params[2];
  params[0].smCount = first;
  params[1].smCount = 8;
  CUdevResource result[2]{}, rest{};
  ASSERT_EQ(split(result, 2, &all, &rest, 0, params), CUDA_SUCCESS);
  EXPECT_EQ(result[0].sm.smCount, first);
  EXPECT_EQ(result[1].sm.smCount, 8u);
  EXPECT_EQ(rest.sm.smCount, total - first - 8);
  EXPECT_EQ(params[0].coscheduledSmCount, 8u) << "the default is written back";
  // A group of several pieces of 8 makes a green context of all their SMs (the descriptor hook
  // expands it), and so does the remainder.
  EXPECT_EQ(green_sms(&result[0], 1), first);
  EXPECT_EQ(green_sms(&result[1], 1), 8u);
  if (rest.sm.smCount > 0)
    EXPECT_EQ(green_sms(&rest, 1), total - first - 8);
  CUdevResource both[2] = {result[0], result[1]};
  EXPECT_EQ(green_sms(both, 2), first + 8);
}

// What one descriptor may combine, as CUDA 13.1 has it: the results of one split call, of one
// co-scheduled count, with at most one work-queue resource. And split-by-count's flags.
TEST(PreloadCuda131, DescriptorsCombineWhat131Combines) {
  REQUIRE_OPTION();
  auto split = get<split_fn>("cuDevSmResourceSplit", 13010);
  auto by_count = get<PFN_cuDevSmResourceSplitByCount_v12040>("cuDevSmResourceSplitByCount", 12040);
  auto generate = get<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  const CUdevResource all = device_sms();
  CUdevResourceDesc desc = nullptr;
  // Two groups of different co-scheduled counts, of one split.
  group_params params[2];
  params[0].smCount = 8;
  params[0].coscheduledSmCount = 8;
  params[1].smCount = 8;
  params[1].coscheduledSmCount = 2;
  CUdevResource groups[2]{};
  ASSERT_EQ(split(groups, 2, &all, nullptr, 0, params), CUDA_SUCCESS);
  EXPECT_EQ(generate(&desc, &groups[0], 1), CUDA_SUCCESS);
  EXPECT_EQ(generate(&desc, groups, 2), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  // A group and two work-queue resources.
  CUdevResource wq[3] = {groups[0]};
  ASSERT_EQ(cu().resource(0, &wq[1], static_cast<CUdevResourceType>(workqueue_config)),
            CUDA_SUCCESS);
  ASSERT_EQ(cu().resource(0, &wq[2], static_cast<CUdevResourceType>(workqueue)), CUDA_SUCCESS);
  EXPECT_EQ(generate(&desc, wq, 2), CUDA_SUCCESS) << "one work-queue resource is fine";
  EXPECT_EQ(generate(&desc, wq, 3), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  // Split-by-count: its results combine, a group of another split does not; unknown flags.
  CUdevResource pieces[3]{};
  unsigned n = 2;
  ASSERT_EQ(by_count(pieces, &n, &all, &pieces[2], 0, 8), CUDA_SUCCESS);
  EXPECT_EQ(generate(&desc, pieces, 3), CUDA_SUCCESS);
  // A second call whose group holds the same SMs, so the same bytes, as pieces[0] (the guide's
  // test, seen on the H100): the first call's results still combine; the two alike do not.
  CUdevResource again[2]{};
  n = 1;
  ASSERT_EQ(by_count(again, &n, &all, &again[1], 0, 8), CUDA_SUCCESS);
  ASSERT_EQ(std::memcmp(&again[0], &pieces[0], sizeof again[0]), 0);
  EXPECT_EQ(generate(&desc, pieces, 3), CUDA_SUCCESS);
  CUdevResource alike[2] = {pieces[0], again[0]};
  EXPECT_EQ(generate(&desc, alike, 2), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  EXPECT_EQ(generate(&desc, again, 2), CUDA_SUCCESS);
  // A piece of another split-by-count call (16 SMs: other bytes than the pieces of 8 above, which
  // the driver writes alike for the same SMs in every call).
  CUdevResource other{};
  n = 1;
  ASSERT_EQ(by_count(&other, &n, &all, nullptr, 0, 16), CUDA_SUCCESS);
  CUdevResource mixed[2] = {pieces[0], other};
  EXPECT_EQ(generate(&desc, mixed, 2), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
  n = 1;
  EXPECT_EQ(by_count(pieces, &n, &all, nullptr, 4, 8), CUDA_ERROR_INVALID_VALUE);
}

TEST(PreloadCuda131, ADryRunWritesTheCountsBack) {
  REQUIRE_OPTION();
  auto split = get<split_fn>("cuDevSmResourceSplit", 13010);
  const CUdevResource all = device_sms();
  group_params params[2];
  params[0].smCount = half(all);
  params[1].smCount = 0; // discovery: as many as fit
  ASSERT_EQ(split(nullptr, 2, &all, nullptr, 0, params), CUDA_SUCCESS);
  EXPECT_EQ(params[0].smCount, half(all));
  EXPECT_GT(params[1].smCount, 0u);
  EXPECT_EQ(params[1].smCount % 8, 0u);
  EXPECT_LE(params[0].smCount + params[1].smCount, all.sm.smCount);
}

TEST(PreloadCuda131, BadRequestsAreRefusedWithCudasCodes) {
  REQUIRE_OPTION();
  auto split = get<split_fn>("cuDevSmResourceSplit", 13010);
  const CUdevResource all = device_sms();
  CUdevResource result[2]{};
  group_params params[2];
  params[0].smCount = 16;
  EXPECT_EQ(split(result, 1, &all, nullptr, 1, params), CUDA_ERROR_INVALID_VALUE) << "flags";
  EXPECT_EQ(split(result, 0, &all, nullptr, 0, params), CUDA_ERROR_INVALID_VALUE) << "no group";
  EXPECT_EQ(split(result, 1, &all, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  params[0].reserved[3] = 1;
  EXPECT_EQ(split(result, 1, &all, nullptr, 0, params), CUDA_ERROR_INVALID_VALUE) << "reserved";
  params[0].reserved[3] = 0;
  params[0].smCount = all.sm.smCount + 8;
  EXPECT_EQ(split(result, 1, &all, nullptr, 0, params), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      << "more SMs than the input has";
  params[0].smCount = 16;
  ASSERT_EQ(split(result, 1, &all, nullptr, 0, params), CUDA_SUCCESS);
  EXPECT_EQ(split(&result[1], 1, &result[0], nullptr, 0, params),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      << "a group of two pieces is not split again";
  CUdevResource not_sm{};
  EXPECT_EQ(split(result, 1, &not_sm, nullptr, 0, params), CUDA_ERROR_INVALID_RESOURCE_TYPE);
  // The group rules, with the codes the compat layer gives (tests/gpu/test_cuda_compat.cu,
  // each_rule_has_its_error).
  struct bad {
    const char *why;
    unsigned sms, cosched, preferred, flags;
    CUresult rc;
  };
  const bad cases[] = {
      {"odd count", 15, 0, 0, 0, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"not a multiple of the co-scheduled count", 12, 8, 0, 0,
       CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"odd co-scheduled count", 16, 3, 0, 0, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"co-scheduled count above 32", 64, 64, 0, 0, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"preferred not a multiple", 16, 4, 6, 0, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"backfill below the co-scheduled count", 4, 8, 0, 1,
       CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION},
      {"unknown group flag", 16, 0, 0, 4, CUDA_ERROR_INVALID_VALUE},
      {"co-scheduled 16 cannot be guaranteed below 13.1", 32, 16, 16, 0, CUDA_ERROR_NOT_SUPPORTED},
  };
  for (const bad &c : cases) {
    if (c.sms > all.sm.smCount)
      continue;
    group_params p[1];
    p[0].smCount = c.sms;
    p[0].coscheduledSmCount = c.cosched;
    p[0].preferredCoscheduledSmCount = c.preferred;
    p[0].flags = c.flags;
    EXPECT_EQ(split(result, 1, &all, nullptr, 0, p), c.rc) << c.why;
  }
}

TEST(PreloadCuda131, WorkQueueResourcesAreAnsweredNotProvisioned) {
  REQUIRE_OPTION();
  CUdevResource r{};
  ASSERT_EQ(cu().resource(0, &r, static_cast<CUdevResourceType>(workqueue_config)), CUDA_SUCCESS);
  EXPECT_EQ(type_of(r), workqueue_config);
  int fields[3];
  std::memcpy(fields, reinterpret_cast<const unsigned char *>(&r) + 96, sizeof fields);
  EXPECT_EQ(fields[0], 0) << "device";
  const char *env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(fields[1], env ? std::atoi(env) : 8) << "concurrency limit";
  EXPECT_EQ(fields[2], 0) << "sharing scope: the device context";
  ASSERT_EQ(cu().resource(0, &r, static_cast<CUdevResourceType>(workqueue)), CUDA_SUCCESS);
  EXPECT_EQ(type_of(r), workqueue);
  // A descriptor of an SM group and a work-queue configuration: the configuration is left out.
  CUdevResource pair[2] = {device_sms(), {}};
  ASSERT_EQ(cu().resource(0, &pair[1], static_cast<CUdevResourceType>(workqueue_config)),
            CUDA_SUCCESS);
  EXPECT_EQ(green_sms(pair, 2), pair[0].sm.smCount);
  auto generate = get<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  CUdevResourceDesc desc = nullptr;
  EXPECT_EQ(generate(&desc, &pair[1], 1), CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      << "work queues alone make no green context below 13.1";
}

TEST(PreloadCuda131, AStreamTellsTheResourceOfItsGreenContext) {
  REQUIRE_OPTION();
  auto split = get<split_fn>("cuDevSmResourceSplit", 13010);
  auto stream_resource = get<stream_resource_fn>("cuStreamGetDevResource", 13010);
  auto generate = get<PFN_cuDevResourceGenerateDesc_v12040>("cuDevResourceGenerateDesc", 12040);
  auto create = get<PFN_cuGreenCtxCreate_v12040>("cuGreenCtxCreate", 12040);
  auto stream_create = get<PFN_cuGreenCtxStreamCreate_v12050>("cuGreenCtxStreamCreate", 12050);
  const CUdevResource all = device_sms();
  group_params params[1];
  params[0].smCount = half(all);
  CUdevResource group{};
  ASSERT_EQ(split(&group, 1, &all, nullptr, 0, params), CUDA_SUCCESS);
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx g = nullptr;
  ASSERT_EQ(generate(&desc, &group, 1), CUDA_SUCCESS);
  ASSERT_EQ(create(&g, desc, 0, 0), CUDA_SUCCESS) << "flags 0 (CU_GREEN_CTX_NONE) accepted";
  CUcontext ctx = nullptr;
  auto from_green = get<PFN_cuCtxFromGreenCtx_v12040>("cuCtxFromGreenCtx", 12040);
  ASSERT_EQ(from_green(&ctx, g), CUDA_SUCCESS);
  ASSERT_EQ(cu().push(ctx), CUDA_SUCCESS);
  CUstream s = nullptr;
  if (stream_create) {
    ASSERT_EQ(stream_create(&s, g, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  } else {
    ASSERT_EQ(cu().stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  CUcontext popped = nullptr;
  cu().pop(&popped);
  CUdevResource r{};
  ASSERT_EQ(stream_resource(s, &r, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
  EXPECT_EQ(r.sm.smCount, half(all));
  EXPECT_EQ(stream_resource(s, &r, workqueue_config), CUDA_ERROR_INVALID_RESOURCE_TYPE)
      << "streams have SM resources only";
}

TEST(PreloadCuda131, HostFunctionsOfThe131AbiRunThroughTheOlderOne) {
  REQUIRE_OPTION();
  auto host_func = get<host_func_13_1_fn>("cuLaunchHostFunc", 13010);
  ASSERT_NE(host_func, nullptr);
  take_log();
  int ran = 0;
  const CUhostFn bump = [](void *p) { ++*static_cast<int *>(p); };
  EXPECT_EQ(host_func(nullptr, bump, &ran, 0), CUDA_SUCCESS);
  EXPECT_EQ(host_func(nullptr, bump, &ran, 1), CUDA_SUCCESS) << "spin-wait runs as blocking";
  EXPECT_EQ(ran, 2);
  EXPECT_NE(find_prefix(take_log(), "host_func"), -1);
  EXPECT_EQ(host_func(nullptr, bump, &ran, 7), CUDA_ERROR_INVALID_VALUE);
}

// The version each caller is told: 13010 to code that names the 13.1 entry point, the driver's own
// to the rest (GREENCTX_PROBE_131 and GREENCTX_PROBE_PLAIN: version_probe.cpp built both ways).
// What the probe `library`'s function `symbol` answers, given the preload library's
// cuGetProcAddress (-3 when the probe lacks it).
int probe(const char *library, const char *symbol) {
  void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  auto f = reinterpret_cast<int (*)(void *)>(lib ? dlsym(lib, symbol) : nullptr);
  return f ? f(dlsym(preload(), "cuGetProcAddress_v2")) : -3;
}
int version_seen_by(const char *library) {
  return probe(library, "probe_version_seen");
}

TEST(PreloadCuda131, OnlyCodeThatKnowsThe131ApiIsToldItsVersion) {
  REQUIRE_OPTION();
  const char *driver = std::getenv("GREENCTX_FAKE_DRIVER_VERSION");
  const int real = driver ? std::atoi(driver) : 13000;
  EXPECT_EQ(version_seen_by(GREENCTX_PROBE_PLAIN), real);
  EXPECT_EQ(version_seen_by(GREENCTX_PROBE_131), real >= 13000 && real < 13010 ? 13010 : real)
      << "raised only on 13.0 drivers";
  EXPECT_EQ(version_seen_by(GREENCTX_PROBE_RUNTIME_131), real)
      << "a CUDA runtime checks the version against the driver: never raised";
}

// A runtime linked into its program statically is out of reach: its cudaStreamGetDevResource asks
// the stream's context below 13.1, so its work-queue queries keep the driver's answer (914 on a
// 13.0 driver), as without greenctx; code on the driver API is answered.
TEST(PreloadCuda131, AStaticRuntimesWorkQueueQueriesKeepTheDriversAnswer) {
  REQUIRE_OPTION();
  EXPECT_EQ(probe(GREENCTX_PROBE_131, "probe_workqueue_query"), CUDA_SUCCESS);
  EXPECT_EQ(probe(GREENCTX_PROBE_RUNTIME_131, "probe_workqueue_query"),
            CUDA_ERROR_INVALID_RESOURCE_TYPE);
}

// ---- a shared CUDA 13.1+ runtime (fake_runtime.cpp) -------------------------------------------

void *fake_runtime() {
  static void *h = dlopen(GREENCTX_FAKE_RUNTIME_PATH, RTLD_NOW | RTLD_LOCAL);
  return h;
}
// The preload library's definition of a runtime name (what the program's reference binds to).
template <class F> F answered(const char *name) {
  return reinterpret_cast<F>(dlsym(preload(), name));
}
int runtime_count(const char *counter) {
  auto f = reinterpret_cast<int (*)()>(dlsym(fake_runtime(), counter));
  return f ? f() : -1;
}
using runtime_split_fn = int (*)(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *,
                                 unsigned, void *);
using runtime_stream_fn = int (*)(CUstream, CUdevResource *, int);
using runtime_host_fn = int (*)(CUstream, CUhostFn, void *, unsigned);
constexpr int requires_newer_driver = 36, invalid_value = 1;
const CUhostFn bump = [](void *p) { ++*static_cast<int *>(p); };

TEST(PreloadCuda131, ASharedRuntimesCallsAreAnsweredInItsPlace) {
  REQUIRE_OPTION();
  ASSERT_NE(fake_runtime(), nullptr) << dlerror();
  const char *driver = std::getenv("GREENCTX_FAKE_DRIVER_VERSION");
  if (driver && std::atoi(driver) >= 13010)
    GTEST_SKIP() << "a 13.1 driver: the runtime's own calls run (PreloadWithout131)";
  const CUdevResource all = device_sms();
  group_params params[1];
  params[0].smCount = 8;
  CUdevResource group{}, rest{};
  auto split = answered<runtime_split_fn>("cudaDevSmResourceSplit");
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split(&group, 1, &all, &rest, 0, params), 0);
  EXPECT_EQ(group.sm.smCount, 8u);
  EXPECT_EQ(rest.sm.smCount, all.sm.smCount - 8);
  EXPECT_EQ(split(&group, 0, &all, &rest, 0, params), invalid_value) << "nbGroups 0";

  // The default stream's resource: the runtime's primary context is made current first, as the
  // runtime does; with a context current, its SMs.
  auto stream_resource = answered<runtime_stream_fn>("cudaStreamGetDevResource");
  CUcontext was = nullptr;
  cu().get_current(&was);
  ASSERT_EQ(cu().set_current(nullptr), CUDA_SUCCESS);
  const int set_before = runtime_count("fake_runtime_set_device_calls");
  CUdevResource r{};
  stream_resource(nullptr, &r, CU_DEV_RESOURCE_TYPE_SM); // the fake runtime makes none current
  EXPECT_EQ(runtime_count("fake_runtime_set_device_calls"), set_before + 1);
  CUcontext primary = nullptr;
  ASSERT_EQ(cu().retain(&primary, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu().set_current(primary), CUDA_SUCCESS);
  ASSERT_EQ(stream_resource(nullptr, &r, CU_DEV_RESOURCE_TYPE_SM), 0);
  EXPECT_EQ(r.sm.smCount, all.sm.smCount);
  EXPECT_EQ(runtime_count("fake_runtime_set_device_calls"), set_before + 1) << "one was current";
  EXPECT_EQ(
      answered<runtime_stream_fn>("cudaStreamGetDevResource_ptsz")(nullptr, &r, workqueue_config),
      914)
      << "cudaErrorInvalidResourceType: streams have SM resources only";
  cu().set_current(was);

  // cudaLaunchHostFunc_v2 runs through the runtime's cudaLaunchHostFunc.
  auto host_func = answered<runtime_host_fn>("cudaLaunchHostFunc_v2");
  const int host_before = runtime_count("fake_runtime_host_func_calls");
  int ran = 0;
  EXPECT_EQ(host_func(nullptr, bump, &ran, 0), 0);
  EXPECT_EQ(host_func(nullptr, bump, &ran, 1), 0) << "spin-wait runs as blocking";
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(runtime_count("fake_runtime_host_func_calls"), host_before + 2);
  EXPECT_EQ(host_func(nullptr, bump, &ran, 7), invalid_value);
  EXPECT_EQ(ran, 2);
}

// Without --cuda-13.1 nothing is provided, and the symbol says what would work.
TEST(PreloadWithout131, NothingIsProvided) {
  if (providing())
    GTEST_SKIP() << "without GREENCTX_RUN_CUDA_13_1 only";
  ASSERT_NE(preload(), nullptr) << dlerror();
  EXPECT_EQ(get<split_fn>("cuDevSmResourceSplit", 13010), nullptr);
  EXPECT_EQ(get<stream_resource_fn>("cuStreamGetDevResource", 13010), nullptr);
  EXPECT_EQ(version_seen_by(GREENCTX_PROBE_131), 13000);
  auto symbol = reinterpret_cast<split_fn>(dlsym(preload(), "cuDevSmResourceSplit"));
  ASSERT_NE(symbol, nullptr);
  group_params params[1];
  EXPECT_EQ(symbol(nullptr, 1, nullptr, nullptr, 0, params), CUDA_ERROR_NOT_FOUND);
}

// Without --cuda-13.1 (or on a 13.1 driver) a shared runtime's calls reach the runtime itself.
TEST(PreloadWithout131, TheRuntimesOwnCallsRun) {
  const char *driver = std::getenv("GREENCTX_FAKE_DRIVER_VERSION");
  if (providing() && !(driver && std::atoi(driver) >= 13010))
    GTEST_SKIP() << "without GREENCTX_RUN_CUDA_13_1, or on a 13.1 driver";
  ASSERT_NE(preload(), nullptr) << dlerror();
  ASSERT_NE(fake_runtime(), nullptr) << dlerror();
  group_params params[1];
  CUdevResource group{};
  EXPECT_EQ(
      answered<runtime_split_fn>("cudaDevSmResourceSplit")(&group, 1, nullptr, nullptr, 0, params),
      requires_newer_driver);
  EXPECT_EQ(answered<runtime_stream_fn>("cudaStreamGetDevResource")(nullptr, &group, 1),
            requires_newer_driver);
  int ran = 0;
  EXPECT_EQ(answered<runtime_host_fn>("cudaLaunchHostFunc_v2")(nullptr, bump, &ran, 0),
            requires_newer_driver);
  EXPECT_EQ(ran, 0);
}

} // namespace
