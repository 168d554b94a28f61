// Resources, splits and descriptors of the 13.1 runtime API.
//
// A cudaDevResource of SM type stands for one or more driver resources (the pieces of a group
// that greenctx built from several split-by-count pieces). greenctx keeps the pieces of each split
// call in a record and writes a tag into the resource's internal padding: the record, which of its
// pieces the resource holds, and the promised co-scheduled unit. Resources stay plain values that
// can be copied as structs; records live for the rest of the process (13.1 has no call to free a
// resource either).
#include "capi/state.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/core/group_split.hpp"
#include "greenctx/core/split.hpp"
#include "greenctx/core/stream.hpp"

#include <algorithm>
#include <bitset>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace greenctx::compat {
namespace {

constexpr std::size_t max_pieces = 128;
using piece_mask = std::bitset<max_pieces>;

enum class tag_kind : std::uint32_t {
  splittable = 1, // a device's or context's SM resource
  group = 2,      // a group of a split
  remainder = 3,  // the remainder of a split
  workqueue = 5,  // a device's or context's work queues
};

struct resource_tag {
  std::uint32_t magic = 0x52435447; // "GTCR"
  tag_kind kind = tag_kind::splittable;
  std::uint64_t record = 0;
  std::uint64_t mask[2] = {};
  std::uint32_t coscheduled = 0;
  std::uint32_t needs_cluster_check = 0;
  std::uint64_t request = 0; // the split request (several records when it took several calls)
  std::uint32_t exact = 0;   // a group without Backfill: every SM is in a co-scheduled unit
};
static_assert(sizeof(resource_tag) <= sizeof(cudaDevResource::_internal_padding));
static_assert(sizeof(cudaDevResource) == 144 && offsetof(cudaDevResource, sm) == 96,
              "the 13.1 layout");

struct record {
  int ordinal = 0;
  std::vector<sm_resource> pieces;
};

std::mutex records_mutex;
std::deque<record> &records() {
  static auto *r = new std::deque<record>;
  return *r;
}

std::uint64_t add_record(int ordinal, std::vector<sm_resource> pieces) {
  if (pieces.size() > max_pieces)
    throw error(CUDA_ERROR_NOT_SUPPORTED, "greenctx",
                "a split with more than " + std::to_string(max_pieces) + " pieces");
  std::lock_guard lock(records_mutex);
  records().push_back({ordinal, std::move(pieces)});
  return records().size();
}

std::uint64_t next_request() {
  static std::atomic<std::uint64_t> n{1};
  return n++;
}

void write_tag(cudaDevResource &out, const resource_tag &tag) {
  std::memset(out._internal_padding, 0, sizeof(out._internal_padding));
  std::memcpy(out._internal_padding, &tag, sizeof(tag));
}

std::optional<resource_tag> read_tag(const cudaDevResource &in) {
  resource_tag tag;
  std::memcpy(&tag, in._internal_padding, sizeof(tag));
  if (tag.magic != resource_tag{}.magic)
    return std::nullopt;
  return tag;
}

// Writes an SM resource holding the pieces `mask` of record `id`.
void export_sm(cudaDevResource &out, std::uint64_t id, const piece_mask &mask, tag_kind kind,
               unsigned coscheduled, bool needs_check, std::uint64_t request, bool exact = false) {
  std::lock_guard lock(records_mutex);
  const record &r = records()[id - 1];
  unsigned sms = 0;
  const sm_resource *first = nullptr;
  for (std::size_t i = 0; i < r.pieces.size(); ++i)
    if (mask[i]) {
      sms += r.pieces[i].sm_count();
      first = first ? first : &r.pieces[i];
    }
  std::memset(&out, 0, sizeof(out));
  out.type = cudaDevResourceTypeSm;
  out.sm.smCount = sms;
  if (first) {
    out.sm.minSmPartitionSize = first->min_partition_size();
    out.sm.smCoscheduledAlignment = coscheduled ? coscheduled : first->coscheduled_alignment();
  }
  resource_tag tag;
  tag.kind = kind;
  tag.record = id;
  tag.mask[0] = (mask & piece_mask(~0ull)).to_ullong();
  tag.mask[1] = ((mask >> 64) & piece_mask(~0ull)).to_ullong();
  tag.coscheduled = coscheduled;
  tag.needs_cluster_check = needs_check;
  tag.request = request;
  tag.exact = exact;
  write_tag(out, tag);
}

piece_mask mask_of(const resource_tag &tag) {
  return (piece_mask(tag.mask[1]) << 64) | piece_mask(tag.mask[0]);
}

// The pieces an SM resource stands for. Throws with `api` when it was not made by greenctx.
struct sm_view {
  resource_tag tag;
  int ordinal = 0;
  std::vector<sm_resource> pieces;
};

sm_view view_sm(const cudaDevResource &in, const char *api, const std::string &which) {
  if (in.type != cudaDevResourceTypeSm)
    refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
           which + " has type " + std::to_string(in.type) + ", not cudaDevResourceTypeSm (1)");
  const auto tag = read_tag(in);
  if (!tag || tag->record == 0 || tag->kind == tag_kind::workqueue)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + " was not filled in by greenctx (cudaDeviceGetDevResource, "
                   "cudaExecutionCtxGetDevResource, cudaStreamGetDevResource or a split): "
                   "SM resources cannot be made by hand");
  std::lock_guard lock(records_mutex);
  if (tag->record > records().size())
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api, which + " is corrupt");
  const record &r = records()[tag->record - 1];
  sm_view v{*tag, r.ordinal, {}};
  const piece_mask mask = mask_of(*tag);
  for (std::size_t i = 0; i < r.pieces.size(); ++i)
    if (mask[i])
      v.pieces.push_back(r.pieces[i]);
  return v;
}

// The resource a split may start from: a device's or context's, not a split output.
sm_resource splittable_input(const cudaDevResource *input, const char *api) {
  require_pointer(input, api, "input");
  const sm_view v = view_sm(*input, api, "input");
  if (v.tag.kind != tag_kind::splittable)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           "input is the output of a split, which cannot be split again: make a descriptor and a "
           "green context of it, and split what cudaExecutionCtxGetDevResource returns");
  return v.pieces.front();
}

void export_workqueue(cudaDevResource &out) {
  std::memset(&out, 0, sizeof(out));
  out.type = cudaDevResourceTypeWorkqueue;
  resource_tag tag;
  tag.kind = tag_kind::workqueue;
  write_tag(out, tag);
}

// Fills `out` with the resource of `type` of a device or context.
void export_resource(cudaDevResource *out, cudaDevResourceType type, int ordinal,
                     const std::function<sm_resource()> &sms,
                     const cudaDevWorkqueueConfigResource &config, const char *api) {
  require_pointer(out, api, "resource");
  switch (type) {
  case cudaDevResourceTypeSm:
    export_splittable(sms(), ordinal, *out);
    return;
  case cudaDevResourceTypeWorkqueueConfig:
    std::memset(out, 0, sizeof(*out));
    out->type = cudaDevResourceTypeWorkqueueConfig;
    out->wqConfig = config;
    return;
  case cudaDevResourceTypeWorkqueue:
    export_workqueue(*out);
    return;
  default:
    refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
           "resource type " + std::to_string(type) +
               " is not one of Sm (1), WorkqueueConfig (1000), Workqueue (10000)");
  }
}

void check_workqueue_config(const cudaDevWorkqueueConfigResource &c, int ordinal, const char *api,
                            const std::string &which) {
  if (c.device != ordinal)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + " is a WorkqueueConfig for device " + std::to_string(c.device) +
               ", the other resources are of device " + std::to_string(ordinal));
  if (c.sharingScope != cudaDevWorkqueueConfigScopeDeviceCtx &&
      c.sharingScope != cudaDevWorkqueueConfigScopeGreenCtxBalanced)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + ": sharingScope " + std::to_string(c.sharingScope) +
               " is not DeviceCtx (0) or GreenCtxBalanced (1)");
  if (c.wqConcurrencyLimit == 0)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + ": wqConcurrencyLimit is 0 (at least 1; the device allows " +
               std::to_string(workqueue_limit()) + ")");
}

} // namespace

void export_splittable(const sm_resource &sms, int ordinal, cudaDevResource &out) {
  const std::uint64_t id = add_record(ordinal, {sms});
  export_sm(out, id, piece_mask(1), tag_kind::splittable, 0, false, 0);
}

namespace {

cudaError_t device_resource(int dev, cudaDevResource *out, cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaDeviceGetDevResource";
    const device &d = device_at(dev, api);
    export_resource(
        out, type, dev, [&] { return d.sms(); }, default_workqueue_config(dev), api);
  });
}

} // namespace
} // namespace greenctx::compat

using namespace greenctx;
using namespace greenctx::compat;

extern "C" {

cudaError_t greenctx_cudaDeviceGetDevResource(int device, cudaDevResource *resource,
                                              cudaDevResourceType type) {
  return device_resource(device, resource, type);
}

cudaError_t greenctx_cudaExecutionCtxGetDevResource(cudaExecutionContext_t ctx,
                                                    cudaDevResource *resource,
                                                    cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxGetDevResource";
    checked_context(ctx, api);
    const auto config =
        ctx->has_workqueue_config ? ctx->workqueue : default_workqueue_config(ctx->ordinal);
    export_resource(
        resource, type, ctx->ordinal, [&] { return ctx->ref.sms(); }, config, api);
  });
}

cudaError_t greenctx_cudaStreamGetDevResource(cudaStream_t stream, cudaDevResource *resource,
                                              cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaStreamGetDevResource";
    require_pointer(resource, api, "resource");
    if (type != cudaDevResourceTypeSm)
      refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
             "streams have SM resources only (type 1), not type " + std::to_string(type));
    const cudaExecutionContext_t ctx = context_of_stream(stream, api);
    export_splittable(ctx->ref.sms(), ctx->ordinal, *resource);
  });
}

cudaError_t greenctx_cudaDevSmResourceSplitByCount(cudaDevResource *result, unsigned int *nbGroups,
                                                   const cudaDevResource *input,
                                                   cudaDevResource *remaining, unsigned int flags,
                                                   unsigned int minCount) {
  return guarded([&] {
    constexpr const char *api = "cudaDevSmResourceSplitByCount";
    require_pointer(nbGroups, api, "nbGroups");
    const sm_resource in = splittable_input(input, api);
    if (flags & ~3u)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "unknown flags " + std::to_string(flags) +
                 ": IgnoreSmCoscheduling (1) and MaxPotentialClusterSize (2) are the only ones");
    const auto f = static_cast<split_flags>(flags);
    if (!result) {
      *nbGroups = count_groups(in, minCount, f);
      return;
    }
    const split_result r = split_by_count(in, *nbGroups, minCount, f);
    const int ordinal = ordinal_of(in.device());
    std::vector<sm_resource> pieces = r.groups;
    pieces.push_back(r.remainder);
    const std::uint64_t id = add_record(ordinal, pieces);
    for (std::size_t i = 0; i < r.groups.size(); ++i)
      export_sm(result[i], id, piece_mask().set(i), tag_kind::group,
                r.groups[i].coscheduled_alignment(), false, 0, true);
    *nbGroups = static_cast<unsigned>(r.groups.size());
    if (remaining)
      export_sm(*remaining, id,
                r.remainder.empty() ? piece_mask() : piece_mask().set(pieces.size() - 1),
                tag_kind::remainder, 0, false, 0);
  });
}

cudaError_t greenctx_cudaDevSmResourceSplit(cudaDevResource *result, unsigned int nbGroups,
                                            const cudaDevResource *input,
                                            cudaDevResource *remainder, unsigned int flags,
                                            cudaDevSmResourceGroupParams *groupParams) {
  return guarded([&] {
    constexpr const char *api = "cudaDevSmResourceSplit";
    require_pointer(groupParams, api, "groupParams");
    if (nbGroups == 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api, "nbGroups is 0: ask for at least one group");
    if (flags != 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api,
             "flags is " + std::to_string(flags) +
                 ": it must be 0 (per-group flags go in "
                 "groupParams[i].flags)");
    for (unsigned i = 0; i < nbGroups; ++i)
      for (unsigned word : groupParams[i].reserved)
        if (word != 0)
          refuse(CUDA_ERROR_INVALID_VALUE, api,
                 "groupParams[" + std::to_string(i) +
                     "].reserved is not zero: zero-initialise the structure");
    const sm_resource in = splittable_input(input, api);
    std::vector<sm_group_params> params(nbGroups);
    for (unsigned i = 0; i < nbGroups; ++i)
      params[i] = {groupParams[i].smCount, groupParams[i].coscheduledSmCount,
                   groupParams[i].preferredCoscheduledSmCount, groupParams[i].flags};
    const auto write_back = [&] {
      for (unsigned i = 0; i < nbGroups; ++i) {
        groupParams[i].smCount = params[i].sm_count;
        groupParams[i].coscheduledSmCount = params[i].coscheduled_sm_count;
        groupParams[i].preferredCoscheduledSmCount = params[i].preferred_coscheduled_sm_count;
      }
    };
    group_split_result r;
    try {
      r = split_groups(in, params, result == nullptr);
    } catch (...) {
      write_back();
      throw;
    }
    write_back();
    if (!result)
      return;
    // One record per split call: groups of one call (and the remainder, from the last call)
    // share it, so that they can be combined into one descriptor.
    const int ordinal = ordinal_of(in.device());
    const std::uint64_t request = next_request();
    for (unsigned run = 0; run < r.runs; ++run) {
      std::vector<sm_resource> pieces;
      std::vector<piece_mask> masks(r.groups.size() + 1);
      const auto add = [&](const sm_group &g, piece_mask &m) {
        if (g.run != run)
          return;
        for (const auto &p : g.pieces) {
          m.set(pieces.size());
          pieces.push_back(p);
        }
      };
      for (std::size_t i = 0; i < r.groups.size(); ++i)
        add(r.groups[i], masks[i]);
      add(r.remainder, masks.back());
      if (pieces.empty())
        continue;
      const std::uint64_t id = add_record(ordinal, pieces);
      for (std::size_t i = 0; i < r.groups.size(); ++i)
        if (r.groups[i].run == run)
          export_sm(result[i], id, masks[i], tag_kind::group, r.groups[i].coscheduled,
                    r.groups[i].needs_cluster_check, request,
                    !(params[i].flags & sm_group_backfill));
      if (remainder && r.remainder.run == run)
        export_sm(*remainder, id, masks.back(), tag_kind::remainder, 0, false, request);
    }
    if (remainder && r.remainder.empty()) {
      std::memset(remainder, 0, sizeof(*remainder));
      remainder->type = cudaDevResourceTypeSm;
    }
  });
}

cudaError_t greenctx_cudaDevResourceGenerateDesc(cudaDevResourceDesc_t *desc,
                                                 cudaDevResource *resources,
                                                 unsigned int nbResources) {
  return guarded([&] {
    constexpr const char *api = "cudaDevResourceGenerateDesc";
    require_pointer(desc, api, "phDesc");
    require_pointer(resources, api, "resources");
    if (nbResources == 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api, "nbResources is 0");
    auto d = std::make_unique<cudaDevResourceDesc_st>();
    d->ordinal = -1;
    std::vector<sm_view> sms;
    std::vector<std::size_t> sm_index;
    int workqueue_resources = 0;
    const auto set_device = [&](int ordinal, const std::string &which) {
      if (d->ordinal >= 0 && d->ordinal != ordinal)
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " is of device " + std::to_string(ordinal) +
                   ", an earlier resource of device " + std::to_string(d->ordinal) +
                   ": all resources must be of one device");
      d->ordinal = ordinal;
    };
    for (unsigned i = 0; i < nbResources; ++i) {
      const cudaDevResource &res = resources[i];
      const std::string which = "resources[" + std::to_string(i) + "]";
      switch (res.type) {
      case cudaDevResourceTypeSm: {
        sm_view v = view_sm(res, api, which);
        if (v.pieces.empty())
          refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                 which + " has no SMs (an empty remainder?)");
        set_device(v.ordinal, which);
        sms.push_back(std::move(v));
        sm_index.push_back(i);
        break;
      }
      case cudaDevResourceTypeWorkqueueConfig:
        ++workqueue_resources;
        d->has_workqueue_config = true;
        d->workqueue = res.wqConfig;
        break;
      case cudaDevResourceTypeWorkqueue:
        ++workqueue_resources;
        d->has_workqueue = true;
        break;
      default:
        refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
               which + " has type " + std::to_string(res.type) +
                   ": Sm (1), WorkqueueConfig (1000) or Workqueue (10000)");
      }
    }
    if (workqueue_resources > 1)
      refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
             std::to_string(workqueue_resources) +
                 " work-queue resources: a descriptor holds at most one (WorkqueueConfig or "
                 "Workqueue)");
    if (sms.empty() && d->ordinal < 0)
      d->ordinal = d->workqueue.device;
    if (d->has_workqueue_config)
      check_workqueue_config(d->workqueue, d->ordinal, api, "the WorkqueueConfig resource");
    std::vector<sm_resource> pieces;
    for (std::size_t k = 0; k < sms.size(); ++k) {
      const sm_view &v = sms[k];
      const std::string which = "resources[" + std::to_string(sm_index[k]) + "]";
      if (k > 0 && v.tag.record != sms.front().tag.record) {
        const bool same_request = v.tag.request != 0 && v.tag.request == sms.front().tag.request;
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " does not come from the same split call as resources[" +
                   std::to_string(sm_index[0]) +
                   "]: several SM resources must be pieces of one "
                   "split" +
                   (same_request ? " (these groups come from one cudaDevSmResourceSplit that "
                                   "greenctx had to build from several split calls on this "
                                   "driver: ask for them in one group, or use a 13.1 driver)"
                                 : std::string()));
      }
      if (v.tag.kind == tag_kind::splittable && sms.size() > 1)
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " is a whole device or context resource: it cannot be combined");
      if (v.tag.kind == tag_kind::group) {
        if (d->coscheduled != 0 && d->coscheduled != v.tag.coscheduled)
          refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                 which + " has coscheduledSmCount " + std::to_string(v.tag.coscheduled) +
                     ", an earlier group " + std::to_string(d->coscheduled) +
                     ": groups combined into one descriptor need the same co-scheduled count");
        d->coscheduled = v.tag.coscheduled;
        d->needs_cluster_check = d->needs_cluster_check || v.tag.needs_cluster_check;
      }
      d->exact = (k == 0 || d->exact) && v.tag.kind == tag_kind::group && v.tag.exact;
      pieces.insert(pieces.end(), v.pieces.begin(), v.pieces.end());
    }
    // Each driver piece once, even when two resources overlap.
    std::vector<sm_resource> unique;
    for (const auto &p : pieces)
      if (std::none_of(unique.begin(), unique.end(), [&](const sm_resource &u) {
            return std::memcmp(&u.native(), &p.native(), sizeof(CUdevResource)) == 0;
          }))
        unique.push_back(p);
    // A 13.1 driver provisions the work-queue configuration: it goes into the driver's
    // descriptor, after the SMs (all of them when none were given).
    d->workqueue_provisioned = d->has_workqueue_config && [] {
      try {
        return detail::driver().version >= 13010;
      } catch (const error &) { // no driver: a work-queue-only descriptor needs none yet
        return false;
      }
    }();
    if (d->workqueue_provisioned) {
      if (unique.empty())
        unique.push_back(device_at(d->ordinal, api).sms());
      std::vector<CUdevResource> raw;
      for (const auto &p : unique) {
        raw.push_back(p.native());
        d->sms += p.sm_count();
      }
      CUdevResource wq{};
      wq.type = static_cast<CUdevResourceType>(cudaDevResourceTypeWorkqueueConfig);
      static_assert(offsetof(cudaDevResource, wqConfig) == offsetof(CUdevResource, sm));
      std::memcpy(&wq.sm, &d->workqueue, sizeof(d->workqueue));
      raw.push_back(wq);
      GREENCTX_CALL(cuDevResourceGenerateDesc, &d->handle, raw.data(),
                    static_cast<unsigned>(raw.size()));
    } else if (!unique.empty()) {
      const descriptor native = descriptor::from(unique);
      d->handle = native.native_handle();
      d->sms = native.sm_count();
    }
    *desc = d.release();
  });
}

} // extern "C"
