// SPDX-License-Identifier: Apache-2.0
// The commit greenctx was built from, for the environment of every result it records.
#pragma once

namespace greenctx::cli {

/// `git describe --always --dirty` of the source tree at build time ("1e814b2", "77cd435-dirty"),
/// or "unknown" when it was built outside a git checkout.
const char *build_commit() noexcept;

} // namespace greenctx::cli
