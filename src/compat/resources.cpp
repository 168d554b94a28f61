// SPDX-License-Identifier: Apache-2.0
// Resources of devices, contexts and streams (cudaDeviceGetDevResource and relatives), and the
// records and tags behind SM resources (resources.hpp).
#include "compat/resources.hpp"

#include "compat/errors.hpp"
#include "compat/registry.hpp"
#include "compat/workqueues.hpp"

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace greenctx::compat {
namespace {

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

piece_mask mask_of(const resource_tag &tag) {
  return (piece_mask(tag.mask[1]) << 64) | piece_mask(tag.mask[0]);
}

void export_workqueue(cudaDevResource &out) {
  std::memset(&out, 0, sizeof(out));
  out.type = cudaDevResourceTypeWorkqueue;
  resource_tag tag;
  tag.kind = tag_kind::workqueue;
  write_tag(out, tag);
}

// Fills `out` with the resource of `type` (the caller's number: raw_enum) of a device or context.
void export_resource(cudaDevResource *out, unsigned type, int ordinal,
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

} // namespace

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

void export_sm(cudaDevResource &out, std::uint64_t id, const piece_mask &mask,
               const sm_tag_fields &fields) {
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
    out.sm.smCoscheduledAlignment =
        fields.coscheduled ? fields.coscheduled : first->coscheduled_alignment();
  }
  resource_tag tag;
  tag.kind = fields.kind;
  tag.record = id;
  tag.mask[0] = (mask & piece_mask(~0ull)).to_ullong();
  tag.mask[1] = ((mask >> 64) & piece_mask(~0ull)).to_ullong();
  tag.coscheduled = fields.coscheduled;
  tag.needs_cluster_check = fields.needs_cluster_check;
  tag.request = fields.request;
  tag.exact = fields.exact;
  write_tag(out, tag);
}

// A device's or a context's whole resource is exported on every query: the same resource shares
// one record, so that a caller who asks in a loop does not grow the bookkeeping (each record is a
// few hundred bytes, kept for the process's life because exported resources may be copied).
std::uint64_t splittable_record(const sm_resource &sms, int ordinal) {
  std::string key(reinterpret_cast<const char *>(&sms.native()), sizeof(CUdevResource));
  const auto add = [&key](const auto &v) {
    key.append(reinterpret_cast<const char *>(&v), sizeof v);
  };
  add(ordinal), add(sms.device()), add(sms.grain().min_partition), add(sms.grain().alignment);
  add(sms.compute_capability_major()), add(sms.origin());
  static std::map<std::string, std::uint64_t> known;
  std::lock_guard lock(records_mutex);
  if (const auto it = known.find(key); it != known.end())
    return it->second;
  records().push_back({ordinal, {sms}});
  return known[key] = records().size();
}

void export_splittable(const sm_resource &sms, int ordinal, cudaDevResource &out) {
  export_sm(out, splittable_record(sms, ordinal), piece_mask(1), {.kind = tag_kind::splittable});
}

sm_view view_sm(const cudaDevResource &in, const char *api, const std::string &which) {
  if (raw_enum(in.type) != cudaDevResourceTypeSm)
    refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
           which + " has type " + std::to_string(raw_enum(in.type)) +
               ", not cudaDevResourceTypeSm (1)");
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
  if ((mask >> r.pieces.size()).any()) // names pieces its record does not have
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api, which + " is corrupt");
  for (std::size_t i = 0; i < r.pieces.size(); ++i)
    if (mask[i])
      v.pieces.push_back(r.pieces[i]);
  return v;
}

sm_resource splittable_input(const cudaDevResource *input, const char *api) {
  require_pointer(input, api, "input");
  const sm_view v = view_sm(*input, api, "input");
  if (v.tag.kind != tag_kind::splittable)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           "input is the output of a split, which cannot be split again: make a descriptor and a "
           "green context of it, and split what cudaExecutionCtxGetDevResource returns");
  if (v.pieces.size() != 1) // a device's or a context's resource is one piece
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api, "input is corrupt");
  return v.pieces.front();
}

} // namespace greenctx::compat

using namespace greenctx;
using namespace greenctx::compat;

extern "C" {

cudaError_t greenctx_cudaDeviceGetDevResource(int device, cudaDevResource *resource,
                                              cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaDeviceGetDevResource";
    const greenctx::device &d = device_at(device, api);
    export_resource(
        resource, raw_enum(type), device, [&] { return d.sms(); }, default_workqueue_config(device),
        api);
  });
}

cudaError_t greenctx_cudaExecutionCtxGetDevResource(cudaExecutionContext_t ctx,
                                                    cudaDevResource *resource,
                                                    cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaExecutionCtxGetDevResource";
    checked_context(ctx, api);
    export_resource(
        resource, raw_enum(type), ctx->ordinal, [&] { return ctx->ref.sms(); },
        workqueue_config_of(ctx), api);
  });
}

cudaError_t greenctx_cudaStreamGetDevResource(cudaStream_t stream, cudaDevResource *resource,
                                              cudaDevResourceType type) {
  return guarded([&] {
    constexpr const char *api = "cudaStreamGetDevResource";
    require_pointer(resource, api, "resource");
    if (raw_enum(type) != cudaDevResourceTypeSm)
      refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
             "streams have SM resources only (type 1), not type " + std::to_string(raw_enum(type)));
    const cudaExecutionContext_t ctx = context_of_stream(stream, api);
    export_splittable(ctx->ref.sms(), ctx->ordinal, *resource);
  });
}

} // extern "C"
