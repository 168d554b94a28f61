// SPDX-License-Identifier: Apache-2.0
// The fixture every GPU test uses: it skips with the reason when there is no driver or GPU, and
// checks that the test left the calling thread's context stack as it found it (greenctx must
// never leak a push or make a context current behind the caller's back).
#pragma once

#include <greenctx/greenctx.hpp>

#include <gtest/gtest.h>

#include <optional>

namespace greenctx::test {

/// The current context of the calling thread, read through the driver (null when none).
CUcontext current_context();

class gpu_test : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  /// Device 0, opened once per test.
  device &dev() { return *device_; }

private:
  std::optional<device> device_;
  CUcontext context_before_ = nullptr;
};

} // namespace greenctx::test
