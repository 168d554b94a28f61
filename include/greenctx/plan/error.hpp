// SPDX-License-Identifier: Apache-2.0
// Errors thrown by greenctx.
//
// Two exception types: `greenctx::error` for anything a driver call or a request rejected (it
// carries the CUresult and the API name), and `greenctx::unsupported_error` for a feature that the
// loaded driver does not have. Messages are built once, at the throw site, and say why the call
// failed and, where there is one, what would work instead.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace greenctx {

/// A failed driver call or a rejected request.
///
/// `code()` is the driver's CUresult (for rejected requests, the code the driver would have
/// returned, usually CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
/// `api()` names the driver entry point or greenctx function that failed.
class error : public std::runtime_error {
public:
  error(CUresult code, std::string api, const std::string &message);

  CUresult code() const noexcept { return code_; }
  const std::string &api() const noexcept { return api_; }

private:
  CUresult code_;
  std::string api_;
};

/// The loaded driver lacks what the call needs (an entry point, a flag, a resource type).
/// `required_version()` is the CUDA driver version that introduced it (for example 12050),
/// `driver_version()` the version of the driver that is loaded (0 when none is).
class unsupported_error : public error {
public:
  unsupported_error(std::string feature, int required_version, int driver_version);

  const std::string &feature() const noexcept { return feature_; }
  int required_version() const noexcept { return required_; }
  int driver_version() const noexcept { return driver_; }

private:
  std::string feature_;
  int required_;
  int driver_;
};

/// A request greenctx rejected before (or instead of) calling the driver: a malformed split, a
/// count the device cannot give. `code()` is what the driver would have answered
/// (CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION); the message names the
/// rule that was broken and the nearest valid requests.
class request_error : public error {
public:
  using error::error;
};

/// "12.5" for 12050.
std::string format_cuda_version(int version);

} // namespace greenctx
