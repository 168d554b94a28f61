// SPDX-License-Identifier: Apache-2.0
#include "common/child_tee.hpp"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace greenctx::cli {
namespace {

// Keeps the tail of `captured` once it holds twice the limit, cut after a line break.
void trim_head(std::string &captured) {
  if (captured.size() <= 2 * tee_kept_bytes)
    return;
  std::size_t cut = captured.size() - tee_kept_bytes;
  if (const std::size_t line = captured.find('\n', cut); line != std::string::npos)
    cut = line + 1;
  captured.erase(0, cut);
}

} // namespace

void tee_child_output(int fd, process::child &program, std::string &captured) {
  char buf[65536];
  bool copying = true;
  const auto take = [&](std::size_t n) {
    if (copying)
      copying = process::write_all(STDOUT_FILENO, std::string_view(buf, n));
    captured.append(buf, n);
    trim_head(captured);
  };
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      // Silence: has the program exited with its stdout still open in a process it left?
      if (!program.poll())
        continue;
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      for (int reads = 0; reads < 1024; ++reads) { // what is there now, not what keeps coming
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0 && !(n < 0 && errno == EINTR))
          break;
        if (n > 0)
          take(static_cast<std::size_t>(n));
      }
      return;
    }
    if (ready < 0)
      return;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return; // end of file (or a broken pipe): the caller waits
    take(static_cast<std::size_t>(n));
  }
}

} // namespace greenctx::cli
