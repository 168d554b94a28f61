#include "child_tee.hpp"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace greenctx::cli {
namespace {

// Writes all of `data` to stdout; false when stdout refuses it (closed, full disk).
bool write_all(const char *data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = write(STDOUT_FILENO, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

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

bool tee_child_output(int fd, pid_t pid, std::string &captured, int &status) {
  char buf[65536];
  bool copying = true;
  const auto take = [&](std::size_t n) {
    if (copying)
      copying = write_all(buf, n);
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
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w != pid)
        continue;
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      for (int reads = 0; reads < 1024; ++reads) { // what is there now, not what keeps coming
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0 && !(n < 0 && errno == EINTR))
          break;
        if (n > 0)
          take(static_cast<std::size_t>(n));
      }
      return true;
    }
    if (ready < 0)
      return false;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return false; // end of file (or a broken pipe): the caller waits
    take(static_cast<std::size_t>(n));
  }
}

} // namespace greenctx::cli
