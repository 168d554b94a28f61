// SPDX-License-Identifier: Apache-2.0
// Copying a child's stdout through greenctx while keeping it (greenctx scale --metric regex: and
// json:, which read the figure from what the program prints): the program writes to a pipe,
// greenctx copies each piece to its own stdout as it comes and keeps the text.
#pragma once

#include "common/process.hpp"

#include <cstddef>
#include <string>

namespace greenctx::cli {

/// The most of a program's stdout kept: the figure is its last match, so the head goes first.
inline constexpr std::size_t tee_kept_bytes = std::size_t{16} << 20;

/// Reads `fd` (the read end of the pipe that is `program`'s stdout) until its end of file, writing
/// each piece to greenctx's stdout (a failed write stops the copy, not the reading) and appending
/// it to `captured`, of which the last tee_kept_bytes or so are kept, cut after a line break.
/// When the pipe stays silent for 50 ms it checks whether `program` has ended (processes the
/// program left behind may hold the pipe open): then it reads what is already there and stops,
/// with `program` reaped. Retries reads interrupted by a signal.
void tee_child_output(int fd, process::child &program, std::string &captured);

} // namespace greenctx::cli
