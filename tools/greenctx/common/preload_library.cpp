// SPDX-License-Identifier: Apache-2.0
#include "common/cli_common.hpp"
#include "common/run_child.hpp"

#include <run_protocol.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

std::string directory_of_self() {
  const std::optional<std::string> path = own_program_path();
  return path ? path->substr(0, path->find_last_of('/')) : ".";
}

} // namespace

std::string preload_library() {
  constexpr const char *api = "greenctx run";
  const auto usable_in_ld_preload = [&](const std::string &path, const std::string &what) {
    if (path.find_first_of(" :") != std::string::npos)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          what + " '" + path +
                              "' contains a space or a colon, and the loader splits LD_PRELOAD on "
                              "both: copy or link the library to a path without them (e.g. "
                              "/tmp/libgreenctx_preload.so) and set " +
                              protocol::env_preload + " to it");
  };
  if (const char *env = std::getenv(protocol::env_preload); env && *env) {
    const std::string given = env;
    usable_in_ld_preload(given, protocol::env_preload);
    if (given.find('/') == std::string::npos)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          std::string(protocol::env_preload) + "=" + given +
                              ": give a path with its folder (./" + given +
                              " or an absolute path): a bare name would be looked up in the "
                              "loader's folders, not here");
    // Absolute, so that the program finds it wherever it changes to. A path that does not resolve
    // is left to check_preload_loads, which says why with the loader's words.
    char resolved[PATH_MAX];
    if (!realpath(given.c_str(), resolved))
      return given;
    usable_in_ld_preload(resolved, std::string(protocol::env_preload) + " resolves to");
    return resolved;
  }
  // Beside the binary (a build tree), in the install's library folder (baked in at configure
  // time: CMAKE_INSTALL_LIBDIR relative to CMAKE_INSTALL_BINDIR), in the usual ones of other
  // layouts (lib, lib64, Debian's lib/<triplet>; the wheel's greenctx/lib), or in the build
  // tree's preload folder.
  const std::string here = directory_of_self();
  std::vector<std::string> folders{here, here + "/" GREENCTX_INSTALL_LIBDIR_FROM_BINDIR,
                                   here + "/../lib", here + "/../lib64"};
  if (*GREENCTX_LIBRARY_ARCHITECTURE)
    folders.push_back(here + "/../lib/" GREENCTX_LIBRARY_ARCHITECTURE);
  folders.push_back(here + "/../preload");
  std::string searched;
  for (auto it = folders.begin(); it != folders.end(); ++it) {
    const std::string &folder = *it;
    if (std::find(folders.begin(), it, folder) != it)
      continue; // the baked folder is often one of the usual ones

    const std::string candidate = folder + "/libgreenctx_preload.so";
    char resolved[PATH_MAX];
    if (access(candidate.c_str(), R_OK) == 0 && realpath(candidate.c_str(), resolved)) {
      usable_in_ld_preload(resolved, "the preload library");
      return resolved;
    }
    searched += (searched.empty() ? "" : ", ") + folder;
  }
  throw error(CUDA_ERROR_NOT_SUPPORTED, api,
              "libgreenctx_preload.so, which greenctx run and scale need, is in none of " +
                  searched + ": reinstall greenctx, or set " + protocol::env_preload +
                  " to the library");
}

void check_preload_loads(const std::string &path) {
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle) {
    dlclose(handle);
    return;
  }
  const char *why = dlerror();
  const std::string loader = why ? why : "dlopen failed";
  if (const char *env = std::getenv(protocol::env_preload); env && *env) {
    struct stat st {};
    const bool folder = stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    throw request_error(
        CUDA_ERROR_INVALID_VALUE, "greenctx run",
        std::string(protocol::env_preload) + "=" + env + " cannot be loaded (" + loader + "): " +
            (folder ? "it is a folder: point it at the libgreenctx_preload.so inside"
                    : "point it at a libgreenctx_preload.so built for this machine, or unset it "
                      "to use the one installed with greenctx"));
  }
  throw error(CUDA_ERROR_NOT_SUPPORTED, "greenctx run",
              "the preload library " + path + " cannot be loaded (" + loader +
                  "): reinstall greenctx, or set " + protocol::env_preload +
                  " to a working build of the library");
}

} // namespace greenctx::cli
