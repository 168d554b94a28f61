// SPDX-License-Identifier: Apache-2.0
// A set of disjoint SM partitions, each with its own green context, made from one split.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/core/device.hpp"
#include "greenctx/core/execution_context.hpp"
#include "greenctx/core/descriptor.hpp"
#include "greenctx/plan/partition_plan.hpp"
#include "greenctx/plan/resource.hpp"

#include <vector>

namespace greenctx {

/// One partition: what was asked, what it got, and its green context.
struct partition {
  unsigned requested = 0; ///< SMs asked; 0 for "rest"
  bool rest = false;
  std::string rounding; ///< why obtained differs from requested, empty if it does not
  green_context context;

  /// SMs the green context holds, read back from the driver.
  unsigned obtained() const { return context.sms().sm_count(); }
  /// "16" or "rest"
  std::string label() const;
};

/// One partition planned and given its descriptor, before any green context exists.
struct described_partition {
  unsigned requested = 0; ///< SMs asked; 0 for "rest"
  bool rest = false;
  std::string rounding; ///< why the SMs differ from those requested, empty if they do not
  /// True when the partition is the whole device (a plan with no split). Its descriptor then has
  /// content_id() 0 (the device's resource carries no SM mask), yet every such partition of a
  /// device holds the same SMs: all of them.
  bool whole_device = false;
  descriptor desc;
};

/// A plan with a descriptor per partition: everything partition_set::create does except creating
/// the green contexts (which costs ~1.5 ms each and leaks on destruction), so that callers that
/// keep contexts, such as pool, can reuse one context for equal descriptors.
struct described_partitions {
  partition_plan plan;
  std::vector<described_partition> parts;
};

/// Plans `request` for `dev` and splits its SMs once into the plan's pieces (no green context is
/// made). Throws request_error when the request cannot be made (before touching the driver where
/// the arithmetic says so, or when the driver gives fewer groups than planned), error for driver
/// failures. `piece_size` as in plan_partitions (0: the sizes' own). Thread safety: any thread.
described_partitions describe_partitions(const device &dev, const partition_request &request,
                                         split_flags flags = split_flags::none,
                                         unsigned piece_size = 0);

/// Partitions made from one split by count, so they never overlap. Keep the set alive and reuse
/// it: destroying green contexts leaks device memory on driver 580.
class partition_set {
public:
  partition_set() = default;
  partition_set(partition_set &&) noexcept = default;
  partition_set &operator=(partition_set &&) noexcept = default;
  // Move-only, said explicitly: std::vector<partition> would claim to be copyable.
  partition_set(const partition_set &) = delete;
  partition_set &operator=(const partition_set &) = delete;

  /// Plans and creates the partitions of `request` on `dev`. Throws request_error when the
  /// request cannot be made (before touching the driver where the arithmetic says so, or when the
  /// driver gives fewer groups than planned), error for driver failures.
  static partition_set create(const device &dev, const partition_request &request,
                              split_flags flags = split_flags::none);

  const partition_plan &plan() const noexcept { return plan_; }
  std::vector<partition> &parts() noexcept { return parts_; }
  const std::vector<partition> &parts() const noexcept { return parts_; }

private:
  partition_plan plan_;
  std::vector<partition> parts_;
};

} // namespace greenctx
