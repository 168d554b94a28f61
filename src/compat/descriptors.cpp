// SPDX-License-Identifier: Apache-2.0
// Descriptors of the 13.1 API: cudaDevResourceGenerateDesc, in steps: read the resources, check
// the work-queue resource, combine the SM resources, make the driver's descriptor.
#include "compat/errors.hpp"
#include "compat/handles.hpp"
#include "compat/registry.hpp"
#include "compat/resources.hpp"
#include "compat/workqueues.hpp"
#include "greenctx/driver/driver.hpp"
#include "greenctx/core/descriptor.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace greenctx::compat {
namespace {

std::string resource_name(std::size_t i) {
  return "resources[" + std::to_string(i) + "]";
}

// The resources of one call, read in order: the SM resources with their places in the caller's
// array, and how many work-queue resources there were (their values go into the descriptor).
struct given_resources {
  std::vector<sm_view> sms;
  std::vector<std::size_t> sm_index;
  int workqueue_resources = 0;
};

// Reads every resource in order, refusing the first that is neither a greenctx SM resource nor a
// work-queue resource, or that is of another device than an SM resource before it.
given_resources read_resources(const cudaDevResource *resources, unsigned count,
                               greenctx_resource_desc &d, const char *api) {
  given_resources given;
  for (unsigned i = 0; i < count; ++i) {
    const cudaDevResource &res = resources[i];
    const std::string which = resource_name(i);
    switch (raw_enum(res.type)) {
    case cudaDevResourceTypeSm: {
      sm_view v = view_sm(res, api, which);
      if (v.pieces.empty())
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " has no SMs (an empty remainder?)");
      if (d.ordinal >= 0 && d.ordinal != v.ordinal)
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " is of device " + std::to_string(v.ordinal) +
                   ", an earlier resource of device " + std::to_string(d.ordinal) +
                   ": all resources must be of one device");
      d.ordinal = v.ordinal;
      given.sms.push_back(std::move(v));
      given.sm_index.push_back(i);
      break;
    }
    case cudaDevResourceTypeWorkqueueConfig:
      ++given.workqueue_resources;
      d.has_workqueue_config = true;
      d.workqueue = res.wqConfig;
      break;
    case cudaDevResourceTypeWorkqueue:
      ++given.workqueue_resources;
      d.has_workqueue = true;
      break;
    default:
      refuse(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
             which + " has type " + std::to_string(raw_enum(res.type)) +
                 ": Sm (1), WorkqueueConfig (1000) or Workqueue (10000)");
    }
  }
  return given;
}

// At most one work-queue resource, and a configuration valid for the descriptor's device (that of
// the SM resources, else the one the configuration names).
void check_workqueue_resources(const given_resources &given, greenctx_resource_desc &d,
                               const char *api) {
  if (given.workqueue_resources > 1)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           std::to_string(given.workqueue_resources) +
               " work-queue resources: a descriptor holds at most one (WorkqueueConfig or "
               "Workqueue)");
  if (given.sms.empty() && d.ordinal < 0)
    d.ordinal = d.workqueue.device;
  if (d.has_workqueue_config)
    check_workqueue_config(d.workqueue, d.ordinal, api, "the WorkqueueConfig resource");
}

// Refuses SM resources that cannot share a descriptor (pieces of different split calls, a whole
// device or context resource with others, groups of different co-scheduled counts), records in
// `d` what the groups promise, and returns their driver pieces.
std::vector<sm_resource> combine_sm_resources(const given_resources &given,
                                              greenctx_resource_desc &d, const char *api) {
  std::vector<sm_resource> pieces;
  const std::vector<sm_view> &sms = given.sms;
  for (std::size_t k = 0; k < sms.size(); ++k) {
    const sm_view &v = sms[k];
    const std::string which = resource_name(given.sm_index[k]);
    if (k > 0 && v.tag.record != sms.front().tag.record) {
      const bool same_request = v.tag.request != 0 && v.tag.request == sms.front().tag.request;
      refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
             which + " does not come from the same split call as " +
                 resource_name(given.sm_index[0]) +
                 ": several SM resources must be pieces of one split" +
                 (same_request ? " (these groups come from one cudaDevSmResourceSplit that "
                                 "greenctx had to build from several split calls on this "
                                 "driver: ask for them in one group, or use a 13.1 driver)"
                               : std::string()));
    }
    if (v.tag.kind == tag_kind::splittable && sms.size() > 1)
      refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
             which + " is a whole device or context resource: it cannot be combined");
    if (v.tag.kind == tag_kind::group) {
      if (d.coscheduled != 0 && d.coscheduled != v.tag.coscheduled)
        refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
               which + " has coscheduledSmCount " + std::to_string(v.tag.coscheduled) +
                   ", an earlier group " + std::to_string(d.coscheduled) +
                   ": groups combined into one descriptor need the same co-scheduled count");
      d.coscheduled = v.tag.coscheduled;
      d.needs_cluster_check = d.needs_cluster_check || v.tag.needs_cluster_check;
    }
    d.exact = (k == 0 || d.exact) && v.tag.kind == tag_kind::group && v.tag.exact;
    pieces.insert(pieces.end(), v.pieces.begin(), v.pieces.end());
  }
  return pieces;
}

// Each driver piece once, even when two resources overlap.
std::vector<sm_resource> unique_pieces(const std::vector<sm_resource> &pieces) {
  std::vector<sm_resource> unique;
  for (const auto &p : pieces)
    if (std::none_of(unique.begin(), unique.end(), [&](const sm_resource &u) {
          return std::memcmp(&u.native(), &p.native(), sizeof(CUdevResource)) == 0;
        }))
      unique.push_back(p);
  return unique;
}

// Whether the loaded driver takes a work-queue configuration in a descriptor (13.1 and up).
bool driver_takes_workqueue_config() {
  try {
    return query_driver().version >= 13010;
  } catch (const error &) { // no driver: a work-queue-only descriptor needs none yet
    return false;
  }
}

// The driver's descriptor of `pieces`. A 13.1 driver provisions the work-queue configuration: it
// goes into the driver's descriptor, after the SMs (all of the device's when none were given).
void make_driver_descriptor(greenctx_resource_desc &d, std::vector<sm_resource> pieces,
                            const char *api) {
  d.workqueue_provisioned = d.has_workqueue_config && driver_takes_workqueue_config();
  if (d.workqueue_provisioned) {
    if (pieces.empty())
      pieces.push_back(device_at(d.ordinal, api).sms());
    const workqueue_config queues{d.workqueue.device, d.workqueue.wqConcurrencyLimit,
                                  raw_enum(d.workqueue.sharingScope)};
    d.native = descriptor::from(pieces, queues);
  } else if (!pieces.empty()) {
    d.native = descriptor::from(pieces);
  }
}

} // namespace
} // namespace greenctx::compat

using namespace greenctx;
using namespace greenctx::compat;

extern "C" cudaError_t greenctx_cudaDevResourceGenerateDesc(cudaDevResourceDesc_t *desc,
                                                            cudaDevResource *resources,
                                                            unsigned int nbResources) {
  return guarded([&] {
    constexpr const char *api = "cudaDevResourceGenerateDesc";
    require_pointer(desc, api, "phDesc");
    require_pointer(resources, api, "resources");
    if (nbResources == 0)
      refuse(CUDA_ERROR_INVALID_VALUE, api, "nbResources is 0");
    auto d = std::make_unique<greenctx_resource_desc>();
    d->ordinal = -1;
    const given_resources given = read_resources(resources, nbResources, *d, api);
    check_workqueue_resources(given, *d, api);
    const std::vector<sm_resource> pieces = combine_sm_resources(given, *d, api);
    make_driver_descriptor(*d, unique_pieces(pieces), api);
    *desc = keep_descriptor(std::move(d));
  });
}
