#include "greenctx/core/split.hpp"

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

// Checks a split request against the input before the driver sees it, so that the error says
// why (the driver answers a bare CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION).
rounded_size check_split(const sm_resource &input, unsigned min_count, split_flags flags,
                         const char *api) {
  if (input.native().type != CU_DEV_RESOURCE_TYPE_SM)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
                        "the input is not an SM resource (default-constructed or of another type)");
  const auto &drv = detail::driver();
  if (any(flags) && drv.version < 12050)
    throw unsupported_error("split flags (IgnoreSmCoscheduling, MaxPotentialClusterSize)", 12050,
                            drv.version);
  const granularity g =
      effective_granularity(input.grain(), input.compute_capability_major(), flags);
  if (min_count > input.sm_count())
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                        "minCount " + std::to_string(min_count) + " is more than the input's " +
                            std::to_string(input.sm_count()) +
                            " SMs. Valid group sizes: " + valid_sizes_summary(input.sm_count(), g));
  return round_group_size(min_count, g, input.sm_count());
}

} // namespace

std::string split_result::explanation() const {
  std::string out = "asked " + std::to_string(requested_groups) + " group" +
                    (requested_groups == 1 ? "" : "s") +
                    " of >= " + std::to_string(size.requested) + " SMs: got " +
                    std::to_string(groups.size()) + " x " + std::to_string(size.size);
  if (!size.reason.empty())
    out += " (" + size.reason + ")";
  if (groups.size() < requested_groups)
    out += ", fewer groups than asked: the SMs ran out";
  out += ", " + std::to_string(remainder.sm_count()) + " SMs left";
  return out;
}

split_result split_by_count(const sm_resource &input, unsigned groups, unsigned min_count,
                            split_flags flags) {
  constexpr const char *api = "greenctx::split_by_count";
  if (groups == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "0 groups requested: ask for at least one (count_groups() only counts)");
  split_result out;
  out.requested_groups = groups;
  out.flags = flags;
  out.size = check_split(input, min_count, flags, api);

  // nbGroups is an upper bound: no more groups than the input's SMs can hold are asked for (or
  // allocated), so that UINT_MAX means "as many as fit" instead of a 600 GB allocation.
  unsigned n = std::min(groups, std::max(1u, max_groups(input.sm_count(), out.size.size)));
  std::vector<CUdevResource> raw(n);
  CUdevResource rest{};
  GREENCTX_CALL(cuDevSmResourceSplitByCount, raw.data(), &n, &input.native(), &rest,
                static_cast<unsigned>(flags), min_count);
  const std::uint64_t origin = detail::next_split_origin();
  for (unsigned i = 0; i < n; ++i)
    out.groups.push_back(detail::make_sm_resource(raw[i], input.device(), origin));
  // Read the size back: it is what the driver gave, whatever the rounding rule predicted.
  if (n > 0 && out.groups.front().sm_count() != out.size.size) {
    out.size.size = out.groups.front().sm_count();
    out.size.reason = "the driver made groups of " + std::to_string(out.size.size) + " SMs";
  }
  out.remainder = detail::make_sm_resource(rest, input.device(), origin);
  return out;
}

unsigned count_groups(const sm_resource &input, unsigned min_count, split_flags flags) {
  check_split(input, min_count, flags, "greenctx::count_groups");
  unsigned n = 0;
  GREENCTX_CALL(cuDevSmResourceSplitByCount, nullptr, &n, &input.native(), nullptr,
                static_cast<unsigned>(flags), min_count);
  return n;
}

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
