// SPDX-License-Identifier: Apache-2.0
// What `greenctx verify` offers the other commands: the verification of partitions already made,
// as its record (demo verifies the split it then measures on).
#pragma once

#include "report/record.hpp"

#include <greenctx/greenctx.hpp>

namespace greenctx::cli {

/// Verifies `set`, made on `dev` from `request`, on the hardware: the record `greenctx verify`
/// prints (verify_record.hpp). Throws error on driver failures.
report::record verification_record(const device &dev, const partition_set &set,
                                   const partition_request &request, unsigned blocks_per_sm);

} // namespace greenctx::cli
