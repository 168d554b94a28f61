// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/descriptor.hpp"

#include "driver/driver_api.hpp"
#include "core/resources.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace greenctx {

namespace {

// CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG of the 13.1 headers, whose resource (device, limit,
// scope: three 32-bit words) lies where the SM resource does.
constexpr auto workqueue_config_type = static_cast<CUdevResourceType>(1000);
static_assert(sizeof(workqueue_config) == 12 && sizeof(CUdevResource::sm) >= 12);

} // namespace

descriptor descriptor::from(std::span<const sm_resource> pieces) {
  return generate(pieces, nullptr);
}

descriptor descriptor::from(std::span<const sm_resource> pieces, const workqueue_config &queues) {
  return generate(pieces, &queues);
}

namespace {

// A descriptor content seen by this process: its id (numbered from 1 in order of appearance) and
// the driver's descriptor first made from it.
struct interned_content {
  std::uint64_t id = 0;
  CUdevResourceDesc handle = nullptr;
};

std::mutex intern_mutex;
std::unordered_map<std::string, interned_content> &interned() {
  static auto *contents = new std::unordered_map<std::string, interned_content>;
  return *contents;
}

// What `bytes` were interned as, if they were.
std::optional<interned_content> find_content(const std::string &bytes) {
  std::lock_guard lock(intern_mutex);
  auto it = interned().find(bytes);
  return it != interned().end() ? std::optional(it->second) : std::nullopt;
}

// Interns `bytes` with `handle` (kept by the first caller only) and returns their id.
std::uint64_t intern_content(std::string bytes, CUdevResourceDesc handle) {
  std::lock_guard lock(intern_mutex);
  auto &all = interned();
  return all.try_emplace(std::move(bytes), interned_content{all.size() + 1, handle})
      .first->second.id;
}

} // namespace

descriptor descriptor::generate(std::span<const sm_resource> pieces,
                                const workqueue_config *queues) {
  constexpr const char *api = "greenctx::descriptor::from";
  if (pieces.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "no resources given");
  std::vector<CUdevResource> raw;
  descriptor d;
  d.device_ = pieces.front().device();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto &p = pieces[i];
    const std::string which = "piece " + std::to_string(i);
    if (p.empty())
      throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                          which + " has no SMs (an empty remainder?)");
    if (p.device() != d.device_)
      throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                          which + " is from another device than piece 0");
    if (pieces.size() > 1 && (p.origin() == 0 || p.origin() != pieces.front().origin()))
      throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                          which + " does not come from the same split call as piece 0: the "
                                  "driver combines only pieces (groups or remainder) of one split");
    raw.push_back(p.native());
    d.sm_count_ += p.sm_count();
  }
  if (queues) { // after the SMs
    CUdevResource wq{};
    wq.type = workqueue_config_type;
    std::memcpy(&wq.sm, queues, sizeof(*queues));
    raw.push_back(wq);
  }
  const bool all_split_pieces =
      std::all_of(pieces.begin(), pieces.end(), [](const sm_resource &p) { return p.origin(); });
  if (!all_split_pieces) {
    GREENCTX_CALL(cuDevResourceGenerateDesc, &d.handle_, raw.data(),
                  static_cast<unsigned>(raw.size()));
    return d;
  }
  std::string bytes(reinterpret_cast<const char *>(&d.device_), sizeof d.device_);
  bytes.append(reinterpret_cast<const char *>(raw.data()), raw.size() * sizeof(CUdevResource));
  // A descriptor is an immutable value the driver never frees, made from these bytes only: the
  // driver is asked once per content, and equal pieces share its descriptor (one call less per
  // repartition, and no descriptor left behind by each one).
  if (const std::optional<interned_content> seen = find_content(bytes)) {
    d.handle_ = seen->handle;
    d.content_id_ = seen->id;
    return d;
  }
  GREENCTX_CALL(cuDevResourceGenerateDesc, &d.handle_, raw.data(),
                static_cast<unsigned>(raw.size()));
  d.content_id_ = intern_content(std::move(bytes), d.handle_);
  return d;
}

} // namespace greenctx
