# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU machine's Python checks: venv_with_torch BASE_PY VENV makes (or reuses) a
# virtual environment that sees BASE_PY's packages (torch, nanobind, scikit-build-core, pytest).
# When BASE_PY is itself a venv (on the GPU image, /opt/torch/.venv), --system-site-packages
# would show the base interpreter's packages, not that venv's torch: a .pth file then adds
# BASE_PY's own site-packages. Without pip where ensurepip is missing: BASE_PY's pip is then
# found through the .pth.
venv_with_torch() {
  local base_py=$1 venv=$2 parent site_dir
  [ -x "$venv/bin/python" ] || "$base_py" -m venv --system-site-packages "$venv" ||
    "$base_py" -m venv --clear --system-site-packages --without-pip "$venv" || return 1
  parent=$("$base_py" -c 'import site, sys
if sys.prefix != sys.base_prefix:
    print("\n".join(site.getsitepackages()))') || return 1
  site_dir=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') ||
    return 1
  rm -f "$site_dir/_greenctx_parent_env.pth"
  [ -z "$parent" ] || printf '%s\n' "$parent" >"$site_dir/_greenctx_parent_env.pth"
}
