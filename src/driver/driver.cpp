// SPDX-License-Identifier: Apache-2.0
#include "greenctx/driver/driver.hpp"

#include "driver/driver_api.hpp"

#include <stdexcept>

namespace greenctx {

namespace {

struct availability_words {
  const char *name;        // for machines
  const char *description; // for people
};

availability_words words_of(availability a) noexcept {
  switch (a) {
  case availability::native:
    return {"native", "native"};
  case availability::greenctx:
    return {"greenctx", "provided by greenctx"};
  case availability::missing:
    return {"missing", "not available"};
  }
  return {"?", "?"};
}

} // namespace

const char *availability_name(availability a) noexcept {
  return words_of(a).name;
}

const char *availability_description(availability a) noexcept {
  return words_of(a).description;
}

std::string result_name(CUresult code) noexcept {
  try {
    const char *name = nullptr;
    if (const auto *d = detail::driver_if_loaded(); d && d->cuGetErrorName)
      d->cuGetErrorName(code, &name);
    if (name)
      return name;
    return "CUresult " + std::to_string(static_cast<int>(code));
  } catch (...) {
    return {};
  }
}

const feature_status &driver_info::operator[](feature f) const {
  for (const auto &s : features)
    if (s.id == f)
      return s;
  throw std::out_of_range("greenctx::driver_info: unknown feature");
}

driver_info query_driver() {
  const auto &api = detail::driver();
  driver_info info;
  info.version = api.version;
  info.library = api.library_path;

  const auto native_or = [&](bool present, availability fallback) {
    return present ? availability::native : fallback;
  };
  // Entry points decide, not version numbers: a driver may lack a symbol its version suggests.
  // sm_partition_info is the exception: 12.x drivers have the fields but leave them zero.
  info.features = {
      {feature::green_contexts, "green_contexts", "green contexts and split by count", 12040,
       native_or(api.cuGreenCtxCreate && api.cuDevSmResourceSplitByCount, availability::missing)},
      {feature::green_stream_create, "green_stream_create",
       "streams created on a green context from any thread", 12050,
       native_or(api.cuGreenCtxStreamCreate != nullptr,
                 api.cuCtxFromGreenCtx ? availability::greenctx : availability::missing)},
      {feature::split_flags, "split_flags",
       "split flags IgnoreSmCoscheduling, MaxPotentialClusterSize", 12050,
       native_or(api.version >= 12050 && api.cuDevSmResourceSplitByCount, availability::missing)},
      {feature::context_events, "context_events", "events recorded/waited on the primary context",
       12050, native_or(api.cuCtxRecordEvent && api.cuCtxWaitEvent, availability::missing)},
      {feature::green_context_id, "green_context_id", "process-unique green-context ids", 12090,
       native_or(api.cuGreenCtxGetId != nullptr, availability::missing)},
      {feature::sm_partition_info, "sm_partition_info",
       "minimum partition size and co-scheduling alignment reported by the driver", 13000,
       native_or(api.version >= 13000, availability::greenctx)},
      {feature::heterogeneous_split, "heterogeneous_split",
       "SM groups of different sizes from one split (cuDevSmResourceSplit)", 13010,
       native_or(api.cuDevSmResourceSplit != nullptr,
                 api.cuDevSmResourceSplitByCount ? availability::greenctx : availability::missing)},
      // Below 13.1 greenctx accepts WorkqueueConfig resources and reports them, but cannot
      // provision them: every context shares the device's queues.
      {feature::workqueue_resources, "workqueue_resources",
       "work-queue configuration provisioned per green context", 13010,
       native_or(api.version >= 13010, availability::missing)},
      {feature::stream_resource_query, "stream_resource_query", "the SM resource behind a stream",
       13010,
       native_or(api.cuStreamGetDevResource != nullptr,
                 (api.cuStreamGetCtx_v2 || api.cuStreamGetGreenCtx) ? availability::greenctx
                                                                    : availability::missing)},
  };
  return info;
}

int toolkit_version() noexcept {
  return CUDA_VERSION;
}

} // namespace greenctx
