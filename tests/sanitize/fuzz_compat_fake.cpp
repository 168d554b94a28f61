// SPDX-License-Identifier: Apache-2.0
// The compat layer over the tests' fake driver (tests/preload/fake_cuda.cpp: two GPUs of 132 SMs in
// units of 8), where calls can succeed: the input is a sequence of calls on what earlier calls
// made (device resources, split groups, descriptors, contexts, streams), each argument taken as
// made or with one byte changed, mixed with stray handles and arbitrary counts, flags and enums.
// What must hold:
// - a call that fails leaves a message and hands out no handle;
// - a call that succeeds gives what it says: SM resources whose counts add up to no more than the
//   input's, at least minCount each and no more groups than asked; a context that reports an SM
//   count within the device's and the device it was made on; a stream that names its context;
// - a destroyed context is refused from then on (destroy again, streams, queries), and its
//   streams answer cudaErrorStreamDetached;
// - every context made is destroyed at the end of the input without error; nothing crashes or
//   touches memory it was not given (ASan, UBSan).
#include "fuzz_compat_input.hpp"
#include "fuzz_common.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using fuzz::input;
using fuzz::most;

constexpr unsigned device_sms = 132; // the fake driver's
constexpr int devices = 2;

void failed(cudaError_t rc, const char *call, const void *handed_out = nullptr) {
  if (std::strlen(greenctxGetLastErrorMessage()) == 0)
    fuzz::finding(std::string(call) + " failed (" + std::to_string(rc) + ") without a message");
  if (handed_out)
    fuzz::finding(std::string(call) + " failed but handed out a handle");
}

void expect(bool holds, const std::string &what) {
  if (!holds)
    fuzz::finding(what);
}

struct made_stream {
  cudaStream_t stream;
  cudaExecutionContext_t ctx;
};

// What this input's calls have made so far.
struct state {
  std::vector<cudaDevResource> resources; // from the device or a split, as handed out
  std::vector<cudaDevResourceDesc_t> descs;
  std::vector<cudaExecutionContext_t> live, dead;
  std::vector<made_stream> streams;
};

// An element of `v` picked by the input, or nullptr when there is none.
template <class T> T *pick(input &in, std::vector<T> &v) {
  return v.empty() ? nullptr : &v[in.in_range<std::size_t>(0, v.size() - 1)];
}

// A resource made earlier (`as_made` says whether it is unchanged), or random bytes.
cudaDevResource resource(input &in, state &s, bool &as_made) {
  cudaDevResource r;
  const cudaDevResource *known = in.flip() ? pick(in, s.resources) : nullptr;
  as_made = known != nullptr;
  if (!known) {
    in.fill(&r, 1);
    return r;
  }
  r = *known;
  if (in.flip()) { // one byte changed
    auto *bytes = reinterpret_cast<unsigned char *>(&r);
    bytes[in.in_range<std::size_t>(0, sizeof r - 1)] ^= in.in_range<unsigned char>(1, 255);
    as_made = false;
  }
  r.nextResource = nullptr;
  return r;
}

cudaExecutionContext_t context(input &in, state &s) {
  switch (in.in_range(0, 2)) {
  case 0:
    if (auto *c = pick(in, s.live))
      return *c;
    break;
  case 1:
    if (auto *c = pick(in, s.dead))
      return *c;
    break;
  default:
    break;
  }
  return in.handle<cudaExecutionContext_t>();
}

bool is_live(const state &s, cudaExecutionContext_t c) {
  return std::find(s.live.begin(), s.live.end(), c) != s.live.end();
}

void keep_results(state &s, const cudaDevResource *r, unsigned n) {
  for (unsigned i = 0; i < n && s.resources.size() < 64; ++i)
    s.resources.push_back(r[i]);
}

void check_sm_resources(const char *call, const cudaDevResource *r, unsigned n, unsigned at_most) {
  unsigned long long sum = 0;
  for (unsigned i = 0; i < n; ++i) {
    expect(r[i].type == cudaDevResourceTypeSm, std::string(call) + " gave a group that is not SMs");
    sum += r[i].sm.smCount;
  }
  expect(sum <= at_most,
         std::string(call) + " gave " + std::to_string(sum) + " SMs of " + std::to_string(at_most));
}

void split_by_count(input &in, state &s) {
  bool as_made = false;
  const cudaDevResource from = resource(in, s, as_made);
  cudaDevResource out[most], rest;
  const unsigned asked = in.in_range<unsigned>(0, most + 1);
  unsigned groups = asked;
  const bool with_result = asked <= most && asked > 0 && in.flip();
  const bool with_rest = in.flip();
  const unsigned flags = in.flip() ? in.value<unsigned>() : in.in_range<unsigned>(0, 1);
  const unsigned min_count = in.flip() ? in.value<unsigned>() : in.in_range<unsigned>(0, 140);
  const cudaError_t rc = cudaDevSmResourceSplitByCount(
      with_result ? out : nullptr, &groups, &from, with_rest ? &rest : nullptr, flags, min_count);
  if (rc != cudaSuccess)
    return failed(rc, "cudaDevSmResourceSplitByCount");
  if (!as_made || !with_result)
    return;
  const char *call = "cudaDevSmResourceSplitByCount";
  expect(groups <= asked, std::string(call) + " gave more groups than asked");
  for (unsigned i = 0; i < groups; ++i)
    expect(out[i].sm.smCount >= min_count && out[i].sm.smCount == out[0].sm.smCount,
           std::string(call) + " gave a group under minCount or of another size");
  cudaDevResource all[most + 1];
  std::copy(out, out + groups, all);
  if (with_rest)
    all[groups] = rest;
  check_sm_resources(call, all, groups + (with_rest ? 1 : 0), from.sm.smCount);
  keep_results(s, all, groups + (with_rest ? 1 : 0));
}

void split(input &in, state &s) {
  bool as_made = false;
  const cudaDevResource from = resource(in, s, as_made);
  cudaDevResource out[most], rest;
  cudaDevSmResourceGroupParams params[most];
  const unsigned groups = in.in_range<unsigned>(0, most);
  for (unsigned i = 0; i < groups; ++i) { // mostly sensible counts, sometimes any bytes
    if (in.flip()) {
      in.fill(&params[i], 1);
      continue;
    }
    std::memset(&params[i], 0, sizeof params[i]);
    params[i].smCount = in.in_range<unsigned>(0, 72);
    params[i].coscheduledSmCount = in.in_range<unsigned>(0, 8);
    params[i].preferredCoscheduledSmCount = in.in_range<unsigned>(0, 8);
    params[i].flags = in.in_range<unsigned>(0, 1);
  }
  const bool with_result = in.flip(), with_rest = in.flip();
  const cudaError_t rc =
      cudaDevSmResourceSplit(with_result ? out : nullptr, groups, &from,
                             with_rest ? &rest : nullptr, in.in_range<unsigned>(0, 1), params);
  if (rc != cudaSuccess)
    return failed(rc, "cudaDevSmResourceSplit");
  if (!as_made || !with_result)
    return;
  cudaDevResource all[most + 1];
  std::copy(out, out + groups, all);
  if (with_rest)
    all[groups] = rest;
  check_sm_resources("cudaDevSmResourceSplit", all, groups + (with_rest ? 1 : 0), from.sm.smCount);
  keep_results(s, all, groups + (with_rest ? 1 : 0));
}

void generate_desc(input &in, state &s) {
  cudaDevResource rs[most];
  const unsigned n = in.in_range<unsigned>(0, most);
  for (unsigned i = 0; i < n; ++i) {
    bool as_made = false;
    rs[i] = resource(in, s, as_made);
  }
  for (unsigned i = 0; i + 1 < n; ++i) // sometimes a chain through nextResource instead
    rs[i].nextResource = in.flip() ? &rs[i + 1] : nullptr;
  cudaDevResourceDesc_t desc = nullptr;
  const cudaError_t rc = cudaDevResourceGenerateDesc(&desc, n ? rs : nullptr, n);
  if (rc != cudaSuccess)
    return failed(rc, "cudaDevResourceGenerateDesc", desc);
  expect(desc != nullptr, "cudaDevResourceGenerateDesc succeeded with no descriptor");
  if (s.descs.size() < 32)
    s.descs.push_back(desc);
}

void check_context(cudaExecutionContext_t ctx, int device, const char *call) {
  cudaDevResource r;
  const cudaError_t rc = cudaExecutionCtxGetDevResource(ctx, &r, cudaDevResourceTypeSm);
  expect(rc == cudaSuccess, std::string(call) + ": its context has no SM resource");
  expect(r.sm.smCount >= 1 && r.sm.smCount <= device_sms,
         std::string(call) + ": its context reports " + std::to_string(r.sm.smCount) + " SMs");
  int on = -1;
  expect(cudaExecutionCtxGetDevice(&on, ctx) == cudaSuccess && on == device,
         std::string(call) + ": its context is on another device");
}

void create_context(input &in, state &s) {
  cudaDevResourceDesc_t *known = in.flip() ? pick(in, s.descs) : nullptr;
  const cudaDevResourceDesc_t desc = known ? *known : in.handle<cudaDevResourceDesc_t>();
  const int device = in.flip() ? in.in_range(0, devices - 1) : in.value<int>();
  const unsigned flags = in.flip() ? 0u : in.value<unsigned>();
  cudaExecutionContext_t ctx = nullptr;
  const cudaError_t rc = cudaGreenCtxCreate(&ctx, desc, device, flags);
  if (rc != cudaSuccess)
    return failed(rc, "cudaGreenCtxCreate", ctx);
  expect(ctx != nullptr, "cudaGreenCtxCreate succeeded with no context");
  check_context(ctx, device, "cudaGreenCtxCreate");
  s.live.push_back(ctx);
}

void destroy(cudaExecutionContext_t ctx, state &s) {
  const bool live = is_live(s, ctx);
  const cudaError_t rc = cudaExecutionCtxDestroy(ctx);
  if (!live) {
    expect(rc != cudaSuccess, "cudaExecutionCtxDestroy took a context that is not live");
    return failed(rc, "cudaExecutionCtxDestroy");
  }
  expect(rc == cudaSuccess, std::string("cudaExecutionCtxDestroy of a live context failed: ") +
                                greenctxGetLastErrorMessage());
  s.live.erase(std::find(s.live.begin(), s.live.end(), ctx));
  s.dead.push_back(ctx);
  expect(cudaExecutionCtxDestroy(ctx) != cudaSuccess, "a context was destroyed twice");
  for (const auto &m : s.streams)
    if (m.ctx == ctx) {
      cudaExecutionContext_t of = nullptr;
      expect(greenctxStreamGetExecutionCtx(m.stream, &of) == cudaErrorStreamDetached && !of,
             "a stream of a destroyed context is not detached");
    }
}

void create_stream(input &in, state &s) {
  const cudaExecutionContext_t ctx = context(in, s);
  cudaStream_t stream = nullptr;
  const unsigned flags = in.flip() ? in.in_range<unsigned>(0, 1) : in.value<unsigned>();
  const cudaError_t rc = cudaExecutionCtxStreamCreate(&stream, ctx, flags, in.value<int>());
  if (rc != cudaSuccess) {
    expect(!(is_live(s, ctx) && flags <= 1),
           std::string("a stream of a live context failed: ") + greenctxGetLastErrorMessage());
    return failed(rc, "cudaExecutionCtxStreamCreate", stream);
  }
  expect(is_live(s, ctx) || std::find(s.dead.begin(), s.dead.end(), ctx) == s.dead.end(),
         "cudaExecutionCtxStreamCreate took a destroyed context");
  cudaExecutionContext_t of = nullptr;
  expect(greenctxStreamGetExecutionCtx(stream, &of) == cudaSuccess && of == ctx,
         "a stream does not name the context it was made on");
  if (s.streams.size() < 32)
    s.streams.push_back({stream, ctx});
}

void query(input &in, state &s) {
  const cudaExecutionContext_t ctx = context(in, s);
  const bool live = is_live(s, ctx);
  cudaDevResource r;
  const cudaError_t rc = fuzz_ctx_get_dev_resource(ctx, &r, in.flip() ? 1 : in.value<int>());
  if (rc != cudaSuccess)
    failed(rc, "cudaExecutionCtxGetDevResource");
  const bool dead = std::find(s.dead.begin(), s.dead.end(), ctx) != s.dead.end();
  unsigned long long id = 0;
  const cudaError_t id_rc = cudaExecutionCtxGetId(ctx, &id);
  expect(!dead || id_rc != cudaSuccess, "a destroyed context answered cudaExecutionCtxGetId");
  expect(!live || id_rc == cudaSuccess, "a live context did not answer cudaExecutionCtxGetId");
  if (id_rc != cudaSuccess)
    failed(id_rc, "cudaExecutionCtxGetId");
  const cudaError_t sync = cudaExecutionCtxSynchronize(ctx);
  expect(!live || sync == cudaSuccess,
         std::string("a live context did not synchronize: ") + greenctxGetLastErrorMessage());
  if (sync != cudaSuccess)
    failed(sync, "cudaExecutionCtxSynchronize");
}

void one_call(input &in, state &s) {
  switch (in.value<unsigned char>() % 9) {
  case 0: { // a device's resource: kept when it is the SMs
    cudaDevResource r;
    const int device = in.flip() ? in.in_range(0, devices - 1) : in.value<int>();
    const int type = in.flip() ? 1 : in.value<int>();
    const cudaError_t rc = fuzz_device_get_dev_resource(device, &r, type);
    if (rc != cudaSuccess)
      return failed(rc, "cudaDeviceGetDevResource");
    if (type == 1) {
      expect(r.type == cudaDevResourceTypeSm && r.sm.smCount == device_sms,
             "cudaDeviceGetDevResource gave another SM count than the device's");
      keep_results(s, &r, 1);
    }
    return;
  }
  case 1:
    return split_by_count(in, s);
  case 2:
    return split(in, s);
  case 3:
    return generate_desc(in, s);
  case 4:
    return create_context(in, s);
  case 5:
    return destroy(context(in, s), s);
  case 6:
    return create_stream(in, s);
  case 7:
    return query(in, s);
  default: { // the device's own execution context
    const int device = in.flip() ? in.in_range(0, devices - 1) : in.value<int>();
    cudaExecutionContext_t ctx = nullptr;
    const cudaError_t rc = cudaDeviceGetExecutionCtx(&ctx, device);
    if (rc != cudaSuccess) {
      expect(device < 0 || device >= devices, "cudaDeviceGetExecutionCtx failed on a device");
      return failed(rc, "cudaDeviceGetExecutionCtx", ctx);
    }
    expect(ctx != nullptr, "cudaDeviceGetExecutionCtx succeeded with no context");
    int on = -1;
    expect(cudaExecutionCtxGetDevice(&on, ctx) == cudaSuccess && on == device,
           "the device's execution context is on another device");
    return;
  }
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Before the library's first call (it loads the driver once per process); the fake driver
  // keeps a log of every call unless told not to.
  setenv("GREENCTX_LIBCUDA", GREENCTX_FAKE_CUDA_PATH, 1);
  void *fake = dlopen(GREENCTX_FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL);
  const auto quiet =
      fake ? reinterpret_cast<void (*)(bool)>(dlsym(fake, "fake_cuda_set_quiet")) : nullptr;
  if (!quiet)
    fuzz::finding(std::string("cannot load the fake driver: ") + GREENCTX_FAKE_CUDA_PATH);
  quiet(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  input in(data, size);
  state s;
  for (int calls = 0; in.more() && calls < 32; ++calls)
    one_call(in, s);
  for (cudaExecutionContext_t ctx : s.live)
    expect(cudaExecutionCtxDestroy(ctx) == cudaSuccess,
           std::string("a context made by this input could not be destroyed: ") +
               greenctxGetLastErrorMessage());
  return 0;
}
