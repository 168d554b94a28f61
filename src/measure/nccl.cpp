// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/nccl.hpp"

#include "driver/driver_api.hpp"
#include "greenctx/plan/error.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace greenctx::measure {
namespace {

// The few entry points used, declared here from NCCL's documented C API (ncclResult_t is an int
// enum, 0 success; ncclFloat32 = 7; ncclSum = 0, ncclAvg = 4; communicators and streams are
// pointers).
using result_t = int;
constexpr int nccl_float32 = 7;
constexpr int nccl_sum = 0;
constexpr int nccl_avg = 4;
struct entry_points {
  result_t (*get_version)(int *) = nullptr;
  result_t (*comm_init_all)(void **, int, const int *) = nullptr;
  result_t (*comm_destroy)(void *) = nullptr;
  result_t (*all_reduce)(const void *, void *, std::size_t, int, int, void *, void *) = nullptr;
  result_t (*send)(const void *, std::size_t, int, int, void *, void *) = nullptr; // optional
  result_t (*recv)(void *, std::size_t, int, int, void *, void *) = nullptr;       // optional
  result_t (*group_start)() = nullptr;
  result_t (*group_end)() = nullptr;
  const char *(*error_string)(result_t) = nullptr;
};

entry_points &fns() {
  static entry_points e;
  return e;
}

template <class F> void bind(void *lib, F &f, const char *name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

void check(result_t r, const char *what) {
  if (r != 0)
    throw error(CUDA_ERROR_UNKNOWN, what,
                std::string(what) + " failed: NCCL error " + std::to_string(r) + " (" +
                    (fns().error_string ? fns().error_string(r) : "no description") + ")");
}

// NCCL's calls go through the CUDA runtime, which makes a device's primary context current on the
// calling thread (cudaSetDevice); greenctx leaves the caller's thread as it found it
// (current_context.hpp), so each call into NCCL is bracketed by this. It never throws (it is used
// in a destructor too); a driver without the two entry points leaves the thread as NCCL left it.
class keep_current_context {
public:
  keep_current_context() noexcept {
    try {
      const auto get = greenctx::detail::driver().cuCtxGetCurrent;
      saved_ok_ = get && get(&saved_) == CUDA_SUCCESS;
    } catch (const error &) { // no driver: nothing to keep
    }
  }
  ~keep_current_context() {
    if (saved_ok_)
      greenctx::detail::release_with(greenctx::detail::driver().cuCtxSetCurrent, saved_);
  }
  keep_current_context(const keep_current_context &) = delete;
  keep_current_context &operator=(const keep_current_context &) = delete;

private:
  CUcontext saved_ = nullptr;
  bool saved_ok_ = false;
};

} // namespace

std::string nccl_library::version_text() const {
  // Since 2.9 the code is major*10000 + minor*100 + patch.
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

const nccl_library &load_nccl() {
  static const nccl_library lib = [] {
    nccl_library l;
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("GREENCTX_NCCL_LIBRARY"); env && *env)
      candidates.emplace_back(env);
    candidates.emplace_back("libnccl.so.2");
    std::string tried;
    const auto try_path = [&](const std::string &path) {
      void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        tried += (tried.empty() ? "" : ", ") + path;
        return false;
      }
      entry_points &e = fns();
      bind(h, e.get_version, "ncclGetVersion");
      bind(h, e.comm_init_all, "ncclCommInitAll");
      bind(h, e.comm_destroy, "ncclCommDestroy");
      bind(h, e.all_reduce, "ncclAllReduce");
      bind(h, e.send, "ncclSend");
      bind(h, e.recv, "ncclRecv");
      bind(h, e.group_start, "ncclGroupStart");
      bind(h, e.group_end, "ncclGroupEnd");
      bind(h, e.error_string, "ncclGetErrorString");
      if (!e.get_version || !e.comm_init_all || !e.comm_destroy || !e.all_reduce ||
          !e.group_start || !e.group_end || !e.error_string) {
        tried += (tried.empty() ? "" : ", ") + path + " (incomplete)";
        e = {};
        return false;
      }
      l.loaded = true;
      l.path = path;
      e.get_version(&l.version);
      return true;
    };
    for (const auto &c : candidates)
      if (try_path(c))
        return l;
    l.failure = "NCCL could not be loaded (tried " + tried +
                "); set GREENCTX_NCCL_LIBRARY to the path of libnccl.so.2 (pip's "
                "nvidia-nccl-cu12 or -cu13, which torch installs, has one under "
                "site-packages/nvidia/; the greenctx command of the Python package sets it "
                "from there)";
    return l;
  }();
  return lib;
}

nccl_clique::nccl_clique(const std::vector<int> &ordinals) {
  const nccl_library &lib = load_nccl();
  if (!lib.loaded)
    throw unsupported_error(lib.failure, 0, 0);
  comms_.resize(ordinals.size());
  const keep_current_context keep;
  check(fns().comm_init_all(comms_.data(), static_cast<int>(ordinals.size()), ordinals.data()),
        "ncclCommInitAll");
}

nccl_clique::~nccl_clique() {
  const keep_current_context keep;
  for (void *c : comms_)
    if (c)
      fns().comm_destroy(c);
}

void nccl_clique::launch(operation op, const std::vector<CUdeviceptr> &buffers, std::size_t count,
                         const std::vector<stream_ref> &streams) {
  if (op == operation::self_copy && (!fns().send || !fns().recv))
    throw unsupported_error("this NCCL has no ncclSend/ncclRecv (NCCL 2.7 or newer has them)", 0,
                            0);
  const keep_current_context keep;
  check(fns().group_start(), "ncclGroupStart");
  result_t first = 0;
  const auto note = [&](result_t r) {
    if (r != 0 && first == 0)
      first = r;
  };
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    void *buf = reinterpret_cast<void *>(buffers[i]);
    void *s = streams[i].native_handle();
    if (op == operation::self_copy) {
      const int self = static_cast<int>(i); // ncclCommInitAll ranks devices in list order
      note(fns().send(buf, count, nccl_float32, self, comms_[i], s));
      note(fns().recv(static_cast<float *>(buf) + count, count, nccl_float32, self, comms_[i], s));
    } else {
      note(fns().all_reduce(buf, buf, count, nccl_float32,
                            op == operation::average ? nccl_avg : nccl_sum, comms_[i], s));
    }
  }
  const result_t end = fns().group_end(); // a group once started is always ended
  check(first, op == operation::self_copy ? "ncclSend/ncclRecv" : "ncclAllReduce");
  check(end, "ncclGroupEnd");
}

} // namespace greenctx::measure
