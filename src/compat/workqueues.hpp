// SPDX-License-Identifier: Apache-2.0
// Work-queue resources of the 13.1 API: the device's default configuration and its checks.
#pragma once

#include "compat/handles.hpp"

#include <string>

namespace greenctx::compat {

/// The CUDA_DEVICE_MAX_CONNECTIONS in force: the environment's value, else the driver's default.
unsigned workqueue_limit();

/// The default WorkqueueConfig resource of a device.
cudaDevWorkqueueConfigResource default_workqueue_config(int ordinal);

/// The WorkqueueConfig a context was created with, or its device's default.
cudaDevWorkqueueConfigResource workqueue_config_of(cudaExecutionContext_t ctx);

/// Throws CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, naming `which`, when `c` is not a valid
/// configuration for device `ordinal`.
void check_workqueue_config(const cudaDevWorkqueueConfigResource &c, int ordinal, const char *api,
                            const std::string &which);

} // namespace greenctx::compat
