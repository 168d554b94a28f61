// SPDX-License-Identifier: Apache-2.0
#include "provided.hpp"

#include "caller.hpp"
#include "explain.hpp"
#include "hooks.hpp"
#include "piece.hpp"
#include "real_driver.hpp"
#include "report.hpp"

#include "greenctx/plan/error.hpp"
#include "greenctx/plan/group_params.hpp"
#include "greenctx/plan/split_advice.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <mutex>
#include <string>

namespace greenctx::preload {
namespace {

constexpr int type_workqueue_config = 1000, type_workqueue = 10000;

// 13.1's CUdevWorkqueueConfigResource, in the resource's union (byte 96), which 13.0 headers lack.
struct workqueue_config {
  int device;
  unsigned concurrency_limit;
  unsigned sharing_scope; // 0: DeviceCtx
};
constexpr std::size_t union_offset = 96;
static_assert(sizeof(CUdevResource) == 144 && offsetof(CUdevResource, sm) == union_offset,
              "CUdevResource is not the layout of CUDA 12.4-13.x");

// A resource's type as the integer it is: 13.1's work-queue types are no values of the 13.0 enum.
int type_of(const CUdevResource &r) {
  int t = 0;
  std::memcpy(&t, &r, sizeof t);
  return t;
}

int real_version() {
  static const int v = [] {
    int version = 0;
    const auto fn = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(
        real().lookup("cuDriverGetVersion", 2020, CU_GET_PROC_ADDRESS_LEGACY_STREAM));
    if (!fn || fn(&version) != CUDA_SUCCESS)
      return 0;
    return version;
  }();
  return v;
}

// Whether greenctx provides the 13.1 entry points in this process: asked, and a driver without
// them (12.4 up, below 13.1).
bool providing() {
  return config().cuda_13_1 && real_version() >= 12040 && real_version() < cuda_13_1;
}

// Whether `path` is a shared CUDA runtime (libcudart.so.13 ...), whose 13.1 calls runtime.cpp
// answers.
bool is_shared_runtime(const std::string &path) {
  const std::size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 12, "libcudart.so") == 0;
}

// A refusal: said on stderr once per message, its code returned (the driver API has no message).
CUresult refuse(const char *api, CUresult code, const std::string &why) {
  warning(std::string(api) + " (provided by greenctx run --cuda-13.1) refused: " + why);
  return code;
}

// ---- the devices of resources -----------------------------------------------------------------

std::mutex resources_mutex;
std::map<std::string, CUdevice> &resource_devices() {
  static auto *m = new std::map<std::string, CUdevice>; // never destroyed
  return *m;
}
// A resource by its type, the driver's internal bytes and the SM fields of CUDA 12.4: what the
// driver writes (a runtime that copies the resource field by field keeps them; the rest of the
// union may be left as it was).
std::string bytes_of(const CUdevResource &r) {
  return std::string(reinterpret_cast<const char *>(&r), union_offset + 3 * sizeof(unsigned));
}

std::optional<CUdevice> device_of_resource(const CUdevResource &r) {
  {
    std::lock_guard lock(resources_mutex);
    if (auto it = resource_devices().find(bytes_of(r)); it != resource_devices().end())
      return it->second;
  }
  if (const CUcontext c = current_context())
    if (const std::optional<CUdevice> d = device_of_context(c))
      return d;
  int count = 0;
  if (real().device_count && real().device_count(&count) == CUDA_SUCCESS && count == 1)
    return 0;
  return std::nullopt;
}

// ---- groups of several pieces -----------------------------------------------------------------

// What greenctx writes into the internal padding of a group of several pieces.
struct group_tag {
  char magic[8] = {'g', 'c', 't', 'x', '1', '3', '1', 0};
  std::uint64_t id = 0;
};

std::mutex groups_mutex;
std::map<std::uint64_t, std::vector<CUdevResource>> &groups() {
  static auto *m = new std::map<std::uint64_t, std::vector<CUdevResource>>; // never destroyed
  return *m;
}

// The pieces of a group greenctx made, or null for any other resource.
const std::vector<CUdevResource> *pieces_of(const CUdevResource &r) {
  group_tag tag;
  std::memcpy(&tag, r._internal_padding, sizeof tag);
  if (std::memcmp(tag.magic, group_tag{}.magic, sizeof tag.magic) != 0)
    return nullptr;
  std::lock_guard lock(groups_mutex);
  const auto it = groups().find(tag.id);
  return it == groups().end() ? nullptr : &it->second;
}

// Writes a group (or the remainder) of a split: its one piece as the driver gave it, or a tagged
// resource standing for its pieces; an empty SM resource when it has none.
void export_group(const sm_group &g, CUdevice device, CUdevResource &out) {
  if (g.pieces.size() == 1) {
    out = g.pieces.front().native();
    note_resource(out, device);
    return;
  }
  std::memset(&out, 0, sizeof out);
  out.type = CU_DEV_RESOURCE_TYPE_SM;
  if (g.pieces.empty())
    return;
  std::vector<CUdevResource> raw = raw_of(g.pieces);
  static std::atomic<std::uint64_t> next{0};
  group_tag tag;
  tag.id = ++next;
  {
    std::lock_guard lock(groups_mutex);
    groups().emplace(tag.id, std::move(raw));
  }
  std::memcpy(out._internal_padding, &tag, sizeof tag);
  out.sm.smCount = g.sm_count();
  out.sm.minSmPartitionSize = g.pieces.front().native().sm.minSmPartitionSize;
  out.sm.smCoscheduledAlignment =
      g.coscheduled ? g.coscheduled : g.pieces.front().native().sm.smCoscheduledAlignment;
  note_resource(out, device);
}

// ---- where resources come from ------------------------------------------------------------------
// CUDA 13.1 builds a descriptor from the results of one split call, of one co-scheduled count:
// greenctx remembers, by their bytes, the resources its splits and the driver's split-by-count
// handed out, to refuse the rest as 13.1 does (the compat layer's rules,
// src/compat/descriptors.cpp).

struct origin {
  std::uint64_t split = 0;
  unsigned coscheduled = 0; ///< 0: no promise (a remainder, split-by-count)
};
// Results of several splits can have the same bytes (the driver writes the same SMs alike): each
// bytes keep the splits that handed them out, the latest last, at most `origins_kept`.
constexpr std::size_t origins_kept = 16;
std::mutex origins_mutex;
std::map<std::string, std::vector<origin>> &origins() {
  static auto *m = new std::map<std::string, std::vector<origin>>; // never destroyed
  return *m;
}
std::atomic<std::uint64_t> last_split{0};

void note_origin(const CUdevResource &r, std::uint64_t split, unsigned coscheduled) {
  if (type_of(r) != CU_DEV_RESOURCE_TYPE_SM || r.sm.smCount == 0)
    return;
  std::lock_guard lock(origins_mutex);
  if (origins().size() >= 65536)
    return;
  std::vector<origin> &of = origins()[bytes_of(r)];
  if (of.size() == origins_kept)
    of.erase(of.begin());
  of.push_back({split, coscheduled});
}

std::vector<origin> origins_of(const CUdevResource &r) {
  std::lock_guard lock(origins_mutex);
  const auto it = origins().find(bytes_of(r));
  return it == origins().end() ? std::vector<origin>{} : it->second;
}

// The refusal of resources 13.1 does not combine into one descriptor, or an empty string: more
// than one work-queue resource, the same SMs twice, resources no one split call handed out
// together, or groups of different co-scheduled counts.
std::string uncombinable(const CUdevResource *resources, unsigned count) {
  unsigned queues = 0;
  std::vector<std::pair<unsigned, std::vector<origin>>> known; // by index, where remembered
  std::set<std::uint64_t> common; // the split calls every remembered resource may come from
  for (unsigned i = 0; i < count; ++i) {
    const int type = type_of(resources[i]);
    if (type == type_workqueue_config || type == type_workqueue) {
      if (++queues > 1)
        return "resources " + std::to_string(i) + " and an earlier one are both work-queue " +
               "resources: a descriptor holds at most one (WorkqueueConfig or Workqueue)";
      continue;
    }
    for (unsigned j = 0; j < i; ++j)
      if (type == CU_DEV_RESOURCE_TYPE_SM && bytes_of(resources[j]) == bytes_of(resources[i]))
        return "resources " + std::to_string(j) + " and " + std::to_string(i) +
               " are the same SMs (one resource twice, or results of two split calls): a " +
               "descriptor combines the disjoint groups and remainder of one split";
    std::vector<origin> of = origins_of(resources[i]);
    if (of.empty())
      continue;
    std::set<std::uint64_t> splits;
    for (const origin &o : of)
      splits.insert(o.split);
    if (known.empty()) {
      common = splits;
    } else {
      std::set<std::uint64_t> both;
      std::set_intersection(common.begin(), common.end(), splits.begin(), splits.end(),
                            std::inserter(both, both.end()));
      if (both.empty())
        return "resource " + std::to_string(i) + " does not come from the same split call as " +
               "resource " + std::to_string(known.front().first) +
               ": a descriptor combines the groups and remainder of one split";
      common = std::move(both);
    }
    known.emplace_back(i, std::move(of));
  }
  if (known.empty())
    return {};
  // The co-scheduled counts the latest common split gave.
  const std::uint64_t split = *common.rbegin();
  std::optional<std::pair<unsigned, unsigned>> first_unit; // index, count
  for (const auto &[i, of] : known)
    for (const origin &o : of)
      if (o.split == split && o.coscheduled != 0) {
        if (!first_unit)
          first_unit = {i, o.coscheduled};
        else if (first_unit->second != o.coscheduled)
          return "resource " + std::to_string(i) + " has coscheduledSmCount " +
                 std::to_string(o.coscheduled) + ", resource " + std::to_string(first_unit->first) +
                 " " + std::to_string(first_unit->second) +
                 ": a descriptor's groups share one co-scheduled count";
      }
  return {};
}

// ---- cuDevSmResourceSplit ---------------------------------------------------------------------

// A group whose co-scheduled unit no driver promise backs is proved with the occupancy
// calculator; the first that falls short is the refusal's reason.
std::string disproved_group(const group_split_result &r, CUdevice device) {
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const sm_group &g = r.groups[i];
    if (!g.needs_cluster_check || g.coscheduled < 2)
      continue;
    const unsigned want =
        clusters_promised(g.sm_count(), g.coscheduled, r.params[i].flags & sm_group_backfill);
    const std::optional<unsigned> got = proven_clusters(device, raw_of(g.pieces), g.coscheduled);
    if (got && *got >= want)
      continue;
    return "group " + std::to_string(i) + ": its " + std::to_string(g.sm_count()) + " SMs run " +
           (got ? std::to_string(*got) : std::string("an unknown number of")) + " clusters of " +
           std::to_string(g.coscheduled) + " SMs at once, not the " + std::to_string(want) +
           " that coscheduledSmCount " + std::to_string(g.coscheduled) +
           " promises (measured with the occupancy calculator)";
  }
  return {};
}

// `group_params`: CU_DEV_SM_RESOURCE_GROUP_PARAMS, 16 words each (greenctx::sm_group_params'
// layout), taken as bytes: the 13.0 headers have no such type, and callers name it their own way.
CUresult split_request(CUdevResource *result, unsigned count, const CUdevResource *input,
                       CUdevResource *remainder, unsigned flags, void *group_params) {
  constexpr const char *api = "cuDevSmResourceSplit";
  if (!group_params)
    return refuse(api, CUDA_ERROR_INVALID_VALUE, "groupParams is NULL");
  if (count == 0)
    return refuse(api, CUDA_ERROR_INVALID_VALUE, "nbGroups is 0: ask for at least one group");
  std::vector<sm_group_params> p(count);
  std::memcpy(p.data(), group_params, count * sizeof(sm_group_params));
  const auto write_back = [&] {
    std::memcpy(group_params, p.data(), count * sizeof(sm_group_params));
  };
  if (flags != 0)
    return refuse(api, CUDA_ERROR_INVALID_VALUE,
                  "flags is " + std::to_string(flags) +
                      ": it must be 0 (per-group flags go in groupParams[i].flags)");
  for (unsigned i = 0; i < count; ++i)
    for (unsigned word : p[i].reserved)
      if (word != 0)
        return refuse(api, CUDA_ERROR_INVALID_VALUE,
                      "groupParams[" + std::to_string(i) +
                          "].reserved is not zero: zero-initialise the structure");
  if (!input || type_of(*input) != CU_DEV_RESOURCE_TYPE_SM)
    return refuse(api, CUDA_ERROR_INVALID_RESOURCE_TYPE,
                  "the input is not an SM resource (cuDeviceGetDevResource, cuCtxGetDevResource "
                  "or cuGreenCtxGetDevResource of type CU_DEV_RESOURCE_TYPE_SM)");
  if (pieces_of(*input))
    return refuse(api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                  "the input is a group of an earlier split: split the device's resource, or "
                  "the resource of a green context made from that group");
  const std::optional<CUdevice> device = device_of_resource(*input);
  if (!device)
    return refuse(api, CUDA_ERROR_INVALID_VALUE,
                  "greenctx cannot tell which GPU the input resource is of: get it with "
                  "cuDeviceGetDevResource or cuCtxGetDevResource in this process, or make a "
                  "context of its GPU current");
  const planner_device dev = planner_device_of(*device);
  const sm_resource in = dev.resource(*input);
  const group_limits limits = make_group_limits(in.sm_count(), in.grain(), dev.cc_major);
  apply_group_defaults(p, limits);
  const split_backend backend = raw_backend(dev);
  group_split_result r;
  try {
    r = plan_group_split(in, p, limits, backend, result == nullptr);
  } catch (const request_error &e) {
    write_back();
    if (e.code() != CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)
      return refuse(api, e.code(), e.what());
    return refuse(api, e.code(),
                  std::string(e.what()) + ". Advice: " + plan_split_advice(in, p, limits, backend));
  }
  write_back();
  if (!result) // a dry run: the counts and defaults are written back
    return CUDA_SUCCESS;
  if (const std::string why = disproved_group(r, *device); !why.empty())
    return refuse(api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                  why + ". Advice: " + plan_split_advice(in, p, limits, backend));
  const std::uint64_t split = ++last_split;
  for (unsigned i = 0; i < count; ++i) {
    export_group(r.groups.at(i), *device, result[i]);
    note_origin(result[i], split, r.groups.at(i).coscheduled);
  }
  if (remainder) {
    export_group(r.remainder, *device, *remainder);
    note_origin(*remainder, split, 0);
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI split_13_1(CUdevResource *result, unsigned count, const CUdevResource *input,
                            CUdevResource *remainder, unsigned flags, void *params) {
  mark_cuda_used();
  try {
    return split_request(result, count, input, remainder, flags, params);
  } catch (const error &e) {
    return refuse("cuDevSmResourceSplit", e.code(), e.what());
  } catch (const std::exception &e) {
    return refuse("cuDevSmResourceSplit", CUDA_ERROR_UNKNOWN, e.what());
  }
}

// ---- cuStreamGetDevResource -------------------------------------------------------------------

template <bool PerThread>
CUresult CUDAAPI stream_resource(CUstream stream, CUdevResource *out, int type) {
  using get_ctx_fn = CUresult(CUDAAPI *)(CUstream, CUcontext *, CUgreenCtx *);
  const unsigned long long flags =
      PerThread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  const auto get_ctx = reinterpret_cast<get_ctx_fn>(program_lookup("cuStreamGetCtx", 12050, flags));
  if (!get_ctx)
    return CUDA_ERROR_NOT_FOUND;
  CUcontext ctx = nullptr;
  CUgreenCtx green = nullptr;
  if (const CUresult rc = get_ctx(stream, &ctx, &green); rc != CUDA_SUCCESS)
    return rc;
  if (type != CU_DEV_RESOURCE_TYPE_SM)
    return refuse("cuStreamGetDevResource", CUDA_ERROR_INVALID_RESOURCE_TYPE,
                  "streams have SM resources only (type 1), not type " + std::to_string(type));
  const auto as_type = static_cast<CUdevResourceType>(type);
  if (green) {
    const auto resource = reinterpret_cast<PFN_cuGreenCtxGetDevResource_v12040>(
        program_lookup("cuGreenCtxGetDevResource", 12040, 0));
    return resource ? resource(green, out, as_type) : CUDA_ERROR_NOT_FOUND;
  }
  const auto resource = reinterpret_cast<PFN_cuCtxGetDevResource_v12040>(
      program_lookup("cuCtxGetDevResource", 12040, 0));
  return resource ? resource(ctx, out, as_type) : CUDA_ERROR_NOT_FOUND;
}

// ---- cuLaunchHostFunc, ABI 13010 --------------------------------------------------------------
} // namespace

std::optional<CUresult> check_host_sync_mode(unsigned sync_mode) {
  constexpr unsigned blocking = 0, spin_wait = 1;
  if (sync_mode != blocking && sync_mode != spin_wait)
    return refuse("cuLaunchHostFunc_v2", CUDA_ERROR_INVALID_VALUE,
                  "syncMode " + std::to_string(sync_mode) +
                      " is neither CU_HOST_TASK_BLOCKING (0) nor CU_HOST_TASK_SPINWAIT (1)");
  if (sync_mode == spin_wait)
    warning("cuLaunchHostFunc_v2 with CU_HOST_TASK_SPINWAIT runs as CU_HOST_TASK_BLOCKING on this "
            "driver (the same order and result; the host function may start later)");
  return std::nullopt;
}

namespace {

template <bool PerThread>
CUresult CUDAAPI host_func_13_1(CUstream stream, CUhostFn fn, void *data, unsigned sync_mode) {
  if (const std::optional<CUresult> refused = check_host_sync_mode(sync_mode))
    return *refused;
  using fn_10000 = CUresult(CUDAAPI *)(CUstream, CUhostFn, void *);
  const auto older = reinterpret_cast<fn_10000>(
      program_lookup("cuLaunchHostFunc", 10000,
                     PerThread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                               : CU_GET_PROC_ADDRESS_LEGACY_STREAM));
  return older ? older(stream, fn, data) : CUDA_ERROR_NOT_FOUND;
}

struct provided_fn {
  const char *name;
  void *legacy;
  void *per_thread; ///< null: the same as legacy
};
const provided_fn provided[] = {
    {"cuDevSmResourceSplit", reinterpret_cast<void *>(&split_13_1), nullptr},
    {"cuStreamGetDevResource", reinterpret_cast<void *>(&stream_resource<false>),
     reinterpret_cast<void *>(&stream_resource<true>)},
    {"cuLaunchHostFunc", reinterpret_cast<void *>(&host_func_13_1<false>),
     reinterpret_cast<void *>(&host_func_13_1<true>)},
};

// The function of a provided entry point the driver has itself (13.1+), else greenctx's when it
// provides them; else null.
void *entry_for(const char *name, bool per_thread) {
  const unsigned long long flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                              : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  if (void *own = real().lookup(name, cuda_13_1, flags))
    return own;
  return provided_entry(name, cuda_13_1, flags);
}

// The symbols of the provided entry points (programs linked with -lcuda against 13.1+ headers):
// the driver's own where it has them, else greenctx's, else a refusal that says what would work.
template <class Fn, class... A> CUresult call_symbol(const char *name, bool per_thread, A... a) {
  if (void *f = entry_for(name, per_thread))
    return reinterpret_cast<Fn>(f)(a...);
  warning(std::string(name) + " is a CUDA 13.1 entry point this driver lacks: run the program "
                              "with greenctx run --cuda-13.1, which provides it");
  return CUDA_ERROR_NOT_FOUND;
}

} // namespace

bool provides_cuda_13_1() {
  return providing();
}

namespace {
std::mutex descs_mutex;
std::map<CUdevResourceDesc, std::vector<CUdevResource>> &descs() {
  static auto *m = new std::map<CUdevResourceDesc, std::vector<CUdevResource>>; // never destroyed
  return *m;
}
} // namespace

void note_desc(CUdevResourceDesc desc, const CUdevResource *resources, unsigned count) {
  if (!desc || !resources || !providing())
    return;
  std::lock_guard lock(descs_mutex);
  if (descs().size() < 65536)
    descs()[desc].assign(resources, resources + count);
}

std::optional<CUgreenCtx> proof_context_for(CUdevResourceDesc desc, CUdevice device) {
  if (!providing())
    return std::nullopt;
  std::vector<CUdevResource> pieces;
  {
    std::lock_guard lock(descs_mutex);
    const auto it = descs().find(desc);
    if (it == descs().end())
      return std::nullopt;
    pieces = it->second;
  }
  return take_proof_context(device, pieces);
}

std::optional<CUresult> check_split_by_count_flags(unsigned flags) {
  constexpr unsigned known = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
                             CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
  if (!providing() || (flags & ~known) == 0)
    return std::nullopt;
  return refuse("cuDevSmResourceSplitByCount", CUDA_ERROR_INVALID_VALUE,
                "unknown flags " + std::to_string(flags & ~known) +
                    ": the flags are IgnoreSmCoscheduling (1) and MaxPotentialClusterSize (2)");
}

void note_split_by_count(const CUdevResource *result, unsigned count,
                         const CUdevResource *remaining) {
  if (!providing())
    return;
  const std::uint64_t split = ++last_split;
  for (unsigned i = 0; result && i < count; ++i)
    note_origin(result[i], split, 0);
  if (remaining)
    note_origin(*remaining, split, 0);
}

void *provided_entry(const char *symbol, int version, unsigned long long flags) {
  if (!symbol || version < cuda_13_1 || !providing())
    return nullptr;
  for (const provided_fn &p : provided)
    if (std::strcmp(p.name, symbol) == 0)
      return (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && p.per_thread ? p.per_thread
                                                                                     : p.legacy;
  return nullptr;
}

__attribute__((noinline)) CUresult CUDAAPI driver_version_for_caller(int *version) {
  return driver_version_for(__builtin_return_address(0), version);
}

CUresult driver_version_for(const void *caller, int *version) {
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  if (real_version() == 0)
    return CUDA_ERROR_NOT_INITIALIZED;
  *version = real_version();
  if (!config().cuda_13_1 || *version < 13000 || *version >= cuda_13_1)
    return CUDA_SUCCESS;
  switch (kind_of_caller(caller)) {
  case caller_kind::knows_13_1:
    // A CUDA 13.x runtime refuses drivers below 13.0 whatever it is told, and code on the driver
    // API built for 13.1 may ask for its entry points only when told 13010: raised for such
    // code, on 13.0 drivers.
    warning("--cuda-13.1: " + object_path(caller) + " is told driver version " +
            std::to_string(cuda_13_1) + " (the driver is " + std::to_string(*version) +
            "), so that it asks for cuDevSmResourceSplit and cuStreamGetDevResource, which "
            "greenctx provides");
    *version = cuda_13_1;
    break;
  case caller_kind::runtime_13_1:
    if (!is_shared_runtime(object_path(caller)))
      warning("--cuda-13.1: " + object_path(caller) +
              " has a CUDA 13.1+ runtime linked in statically, which greenctx cannot reach: a "
              "runtime checks the driver version against the driver, so it keeps seeing " +
              std::to_string(*version) +
              ", and its cudaDevSmResourceSplit and cudaStreamGetDevResource return "
              "cudaErrorCallRequiresNewerDriver (36) as without greenctx. Build it with the "
              "shared runtime (nvcc -cudart shared), whose calls greenctx answers, or with "
              "greenctx/cuda_compat.h");
    break;
  case caller_kind::runtime:
  case caller_kind::other:
    break;
  }
  return CUDA_SUCCESS;
}

std::optional<CUresult> workqueue_resource(CUdevice device, CUdevResource *out, int type,
                                           const void *caller) {
  if ((type != type_workqueue_config && type != type_workqueue) || !providing())
    return std::nullopt;
  if (const caller_kind k = kind_of_caller(caller);
      (k == caller_kind::runtime || k == caller_kind::runtime_13_1) &&
      !is_shared_runtime(object_path(caller)))
    return std::nullopt;
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(out, 0, sizeof *out);
  std::memcpy(out, &type, sizeof type); // the type, as an integer
  if (type == type_workqueue_config) {
    // CUDA_DEVICE_MAX_CONNECTIONS (1 to 32) when set, else the driver's documented default of 8.
    const char *env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const long n = env ? std::strtol(env, nullptr, 10) : 0;
    const workqueue_config c{static_cast<int>(device), n >= 1 && n <= 32 ? unsigned(n) : 8u, 0};
    std::memcpy(reinterpret_cast<unsigned char *>(out) + union_offset, &c, sizeof c);
  }
  return CUDA_SUCCESS;
}

void note_resource(const CUdevResource &r, CUdevice device) {
  if (!providing() || type_of(r) != CU_DEV_RESOURCE_TYPE_SM)
    return;
  std::lock_guard lock(resources_mutex);
  if (resource_devices().size() < 65536)
    resource_devices()[bytes_of(r)] = device;
}

std::optional<CUdevice> device_of_context(CUcontext ctx) {
  if (!ctx || !real().ctx_get_device)
    return std::nullopt;
  scoped_current current(ctx);
  CUdevice d = 0;
  if (real().ctx_get_device(&d) != CUDA_SUCCESS)
    return std::nullopt;
  return d;
}

std::optional<std::vector<CUdevResource>> resources_for_desc(const CUdevResource *resources,
                                                             unsigned count, CUresult *refusal) {
  *refusal = CUDA_SUCCESS;
  if (!providing() || !resources)
    return std::nullopt;
  if (const std::string why = uncombinable(resources, count); !why.empty()) {
    *refusal = refuse("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, why);
    return std::nullopt;
  }
  bool changed = false;
  std::vector<CUdevResource> out;
  for (unsigned i = 0; i < count; ++i) {
    const CUdevResource &r = resources[i];
    if (const std::vector<CUdevResource> *pieces = pieces_of(r)) {
      out.insert(out.end(), pieces->begin(), pieces->end());
      changed = true;
    } else if (type_of(r) == type_workqueue_config || type_of(r) == type_workqueue) {
      changed = true; // not provisioned: every context shares the device's queues
    } else {
      out.push_back(r);
    }
  }
  if (!changed)
    return std::nullopt;
  if (out.empty()) {
    *refusal = refuse("cuDevResourceGenerateDesc", CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                      "only work-queue resources: below CUDA 13.1 a descriptor needs an SM "
                      "resource, and work queues are not provisioned (every context shares the "
                      "device's CUDA_DEVICE_MAX_CONNECTIONS queues)");
    return std::nullopt;
  }
  return out;
}

} // namespace greenctx::preload

// ---- the provided entry points as symbols ------------------------------------------------------
// Named by assembler labels: CUDA 13.1+ headers declare these names with CUDA's own types.

#define GREENCTX_PROVIDED_SYMBOL(name)                                                             \
  extern "C" __attribute__((visibility("default"), used, noinline))                                \
  CUresult CUDAAPI greenctx_symbol_##name
using greenctx::preload::call_symbol;
using greenctx::preload::host_func_fn;
using greenctx::preload::stream_resource_fn;

GREENCTX_PROVIDED_SYMBOL(split)
(CUdevResource *, unsigned, const CUdevResource *, CUdevResource *, unsigned,
 void *)__asm__("cuDevSmResourceSplit");
GREENCTX_PROVIDED_SYMBOL(split)
(CUdevResource *result, unsigned count, const CUdevResource *input, CUdevResource *remainder,
 unsigned flags, void *params) {
  return call_symbol<greenctx::preload::split_fn>("cuDevSmResourceSplit", false, result, count,
                                                  input, remainder, flags, params);
}
GREENCTX_PROVIDED_SYMBOL(stream_resource)
(CUstream, CUdevResource *, int)__asm__("cuStreamGetDevResource");
GREENCTX_PROVIDED_SYMBOL(stream_resource)(CUstream s, CUdevResource *r, int type) {
  return call_symbol<stream_resource_fn>("cuStreamGetDevResource", false, s, r, type);
}
GREENCTX_PROVIDED_SYMBOL(stream_resource_ptsz)
(CUstream, CUdevResource *, int)__asm__("cuStreamGetDevResource_ptsz");
GREENCTX_PROVIDED_SYMBOL(stream_resource_ptsz)(CUstream s, CUdevResource *r, int type) {
  return call_symbol<stream_resource_fn>("cuStreamGetDevResource", true, s, r, type);
}
GREENCTX_PROVIDED_SYMBOL(host_func)
(CUstream, CUhostFn, void *, unsigned)__asm__("cuLaunchHostFunc_v2");
GREENCTX_PROVIDED_SYMBOL(host_func)(CUstream s, CUhostFn f, void *data, unsigned mode) {
  return call_symbol<host_func_fn>("cuLaunchHostFunc", false, s, f, data, mode);
}
GREENCTX_PROVIDED_SYMBOL(host_func_ptsz)
(CUstream, CUhostFn, void *, unsigned)__asm__("cuLaunchHostFunc_v2_ptsz");
GREENCTX_PROVIDED_SYMBOL(host_func_ptsz)(CUstream s, CUhostFn f, void *data, unsigned mode) {
  return call_symbol<host_func_fn>("cuLaunchHostFunc", true, s, f, data, mode);
}
GREENCTX_PROVIDED_SYMBOL(driver_version)(int *) __asm__("cuDriverGetVersion");
GREENCTX_PROVIDED_SYMBOL(driver_version)(int *version) {
  return greenctx::preload::driver_version_for(__builtin_return_address(0), version);
}

void *greenctx::preload::provided_symbol(const char *name) {
  static const std::pair<const char *, void *> symbols[] = {
      {"cuDevSmResourceSplit", reinterpret_cast<void *>(&greenctx_symbol_split)},
      {"cuStreamGetDevResource", reinterpret_cast<void *>(&greenctx_symbol_stream_resource)},
      {"cuStreamGetDevResource_ptsz",
       reinterpret_cast<void *>(&greenctx_symbol_stream_resource_ptsz)},
      {"cuLaunchHostFunc_v2", reinterpret_cast<void *>(&greenctx_symbol_host_func)},
      {"cuLaunchHostFunc_v2_ptsz", reinterpret_cast<void *>(&greenctx_symbol_host_func_ptsz)},
  };
  for (const auto &[n, address] : symbols)
    if (std::strcmp(n, name) == 0)
      return address;
  return nullptr;
}
