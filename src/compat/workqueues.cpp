// SPDX-License-Identifier: Apache-2.0
#include "compat/workqueues.hpp"

#include "compat/errors.hpp"
#include "greenctx/core/device.hpp"

namespace greenctx::compat {

unsigned workqueue_limit() {
  // The documented default of CUDA_DEVICE_MAX_CONNECTIONS; the GPU check measures it.
  return static_cast<unsigned>(max_connections_from_environment().value_or(8));
}

cudaDevWorkqueueConfigResource default_workqueue_config(int ordinal) {
  return {ordinal, workqueue_limit(), cudaDevWorkqueueConfigScopeDeviceCtx};
}

cudaDevWorkqueueConfigResource workqueue_config_of(cudaExecutionContext_t ctx) {
  return ctx->has_workqueue_config ? ctx->workqueue : default_workqueue_config(ctx->ordinal);
}

void check_workqueue_config(const cudaDevWorkqueueConfigResource &c, int ordinal, const char *api,
                            const std::string &which) {
  if (c.device != ordinal)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + " is a WorkqueueConfig for device " + std::to_string(c.device) +
               ", the other resources are of device " + std::to_string(ordinal));
  const unsigned scope = raw_enum(c.sharingScope);
  if (scope != cudaDevWorkqueueConfigScopeDeviceCtx &&
      scope != cudaDevWorkqueueConfigScopeGreenCtxBalanced)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + ": sharingScope " + std::to_string(scope) +
               " is not DeviceCtx (0) or GreenCtxBalanced (1)");
  if (c.wqConcurrencyLimit == 0)
    refuse(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
           which + ": wqConcurrencyLimit is 0 (at least 1; the device allows " +
               std::to_string(workqueue_limit()) + ")");
}

} // namespace greenctx::compat
