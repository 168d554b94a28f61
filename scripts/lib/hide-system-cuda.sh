# SPDX-License-Identifier: Apache-2.0
# hide_system_cuda: sets ignore_prefixes and ignore_paths (bash arrays) to the installed CUDA
# toolkit's folders and every link to them from /usr/local, so that CMake's searches, given them as
# CMAKE_IGNORE_PREFIX_PATH and CMAKE_IGNORE_PATH, see a machine without a toolkit (CMake also
# looks in /usr/local/cuda and in every PATH entry's prefix, here /usr/local, whose lib64 may be a
# link into the toolkit). Sourced by scripts/setup.sh and scripts/test.sh.
hide_system_cuda() {
  ignore_prefixes=() ignore_paths=()
  local d sub
  for d in /usr/local/*; do
    [ -e "$d" ] || continue
    case "$(readlink -f "$d")" in
      /usr/local/cuda*) ;;
      *) continue ;;
    esac
    ignore_prefixes+=("$d")
    for sub in "" /stubs /lib /lib/stubs /lib64 /lib64/stubs /bin /include \
               /targets/"$(uname -m)"-linux/lib /targets/"$(uname -m)"-linux/lib/stubs; do
      ignore_paths+=("$d$sub")
    done
  done
}
