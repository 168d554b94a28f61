// SPDX-License-Identifier: Apache-2.0
#include "piece.hpp"

#include "real_driver.hpp"

#include "greenctx/plan/error.hpp"
#include "greenctx/plan/partition_plan.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

namespace greenctx::preload {
namespace {

int attribute(CUdevice device, CUdevice_attribute a) {
  int v = 0;
  if (!real().device_attribute || real().device_attribute(&v, a, device) != CUDA_SUCCESS)
    return 0;
  return v;
}

} // namespace

planner_device planner_device_of(CUdevice device) {
  planner_device p;
  p.device = device;
  p.cc_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p.documented = documented_granularity(
      p.cc_major, attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  return p;
}

split_backend raw_backend(const planner_device &dev) {
  const CUdevice device = dev.device;
  const granularity documented = dev.documented;
  const int cc_major = dev.cc_major;
  split_backend b;
  b.split = [device, documented, cc_major](const sm_resource &input, unsigned unit, bool ignore) {
    static std::atomic<std::uint64_t> origin{0};
    const unsigned flags = ignore ? CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
    unsigned n = 0;
    if (real().split(nullptr, &n, &input.native(), nullptr, flags, unit) != CUDA_SUCCESS || n == 0)
      return std::pair{std::vector<sm_resource>{}, input};
    std::vector<CUdevResource> out(n);
    CUdevResource rest{};
    if (real().split(out.data(), &n, &input.native(), &rest, flags, unit) != CUDA_SUCCESS)
      throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "cuDevSmResourceSplitByCount",
                          "the driver refused a split it had counted");
    const std::uint64_t o = ++origin;
    std::vector<sm_resource> groups;
    for (unsigned i = 0; i < n; ++i)
      groups.push_back(reported_sm_resource(out[i], device, documented, cc_major, o));
    return std::pair{std::move(groups),
                     reported_sm_resource(rest, device, documented, cc_major, o)};
  };
  b.make_splittable = [device, documented, cc_major](std::span<const sm_resource> pieces) {
    static std::mutex mutex;
    static auto *made = new std::map<std::string, CUdevResource>; // never destroyed
    std::vector<CUdevResource> raw = raw_of(pieces);
    const std::string key(reinterpret_cast<const char *>(raw.data()),
                          raw.size() * sizeof(CUdevResource));
    std::lock_guard lock(mutex);
    auto it = made->find(key);
    if (it == made->end()) {
      CUdevResourceDesc desc = nullptr;
      CUgreenCtx g = nullptr;
      CUdevResource r{};
      if (real().generate_desc(&desc, raw.data(), static_cast<unsigned>(raw.size())) !=
              CUDA_SUCCESS ||
          real().green_create(&g, desc, device, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
          real().green_resource(g, &r, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
        throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "cuGreenCtxCreate",
                            "an intermediate green context could not be made");
      it = made->emplace(key, r).first;
    }
    return reported_sm_resource(it->second, device, documented, cc_major);
  };
  return b;
}

std::vector<CUdevResource> raw_of(std::span<const sm_resource> pieces) {
  std::vector<CUdevResource> raw;
  for (const sm_resource &p : pieces)
    raw.push_back(p.native());
  return raw;
}

std::vector<CUdevResource> split_piece(int device, const std::string &spec, unsigned index,
                                       unsigned flags, std::string *why) {
  const real_driver &d = real();
  if (!d.device_resource || !d.split || !d.generate_desc || !d.green_create || !d.green_resource) {
    *why = "this driver lacks the green-context API (CUDA 12.4+)";
    return {};
  }
  CUdevResource all{};
  if (d.device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) {
    *why = "cuDeviceGetDevResource failed";
    return {};
  }
  try {
    const planner_device dev = planner_device_of(device);
    const int major = dev.cc_major;
    const auto f = static_cast<split_flags>(flags);
    const sm_resource input = dev.resource(all);
    const granularity reported = input.grain();
    const partition_plan plan = plan_partitions(parse_partition_request(spec), all.sm.smCount,
                                                effective_granularity(reported, major, f), f);
    if (index >= plan.parts.size()) {
      *why = "'" + spec + "' has " + std::to_string(plan.parts.size()) + " pieces (0 to " +
             std::to_string(plan.parts.size() - 1) + "), not a piece " + std::to_string(index);
      return {};
    }
    if (plan.groups == 0) // one partition of the whole device
      return {all};
    std::vector<sm_group_params> params = to_group_params(plan);
    const group_limits limits = make_group_limits(all.sm.smCount, reported, major);
    apply_group_defaults(params, limits);
    const group_split_result made =
        plan_group_split(input, params, {split_unit_of(plan)}, limits, raw_backend(dev), false);
    const auto &part = plan.parts[index];
    if (part.rest) {
      if (made.remainder.pieces.empty()) {
        *why = "the split left no SMs for 'rest'";
        return {};
      }
      return raw_of(made.remainder.pieces);
    }
    std::size_t group = 0; // the groups are the parts other than rest, in order
    for (std::size_t i = 0; i < index; ++i)
      group += plan.parts[i].rest ? 0 : 1;
    return raw_of(made.groups.at(group).pieces);
  } catch (const std::exception &e) {
    *why = e.what();
    return {};
  }
}

std::string hex_of(const std::vector<CUdevResource> &pieces) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (const CUdevResource &r : pieces) {
    if (!s.empty())
      s += ' ';
    const auto *b = reinterpret_cast<const unsigned char *>(&r);
    for (std::size_t i = 0; i < sizeof r; ++i) {
      s += digits[b[i] >> 4];
      s += digits[b[i] & 15];
    }
  }
  return s;
}

} // namespace greenctx::preload
