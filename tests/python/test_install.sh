#!/usr/bin/env bash
# make install's Python package: installs the build tree into a temporary
# prefix, then imports pccl from there with Debian's python3 in an empty
# environment (no PCCL_LIBRARY, no PYTHONPATH, no LD_LIBRARY_PATH) and checks
# that it loaded the installed libpccl, not the build tree's.
# Usage: test_install.sh BUILD_DIR PYTHON_SITE_DIR (relative to the prefix)
set -euo pipefail
build=$1 site=$2
prefix=$(mktemp -d /tmp/pccl-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
env -i /usr/bin/python3 -I - "$prefix" "$site" <<'PY'
import os, sys
prefix, site = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(prefix, site))
import pccl
from pccl import _native
here = os.path.realpath(pccl.__file__)
lib = os.path.realpath(_native.lib._name)
assert here.startswith(os.path.realpath(prefix)), "pccl imported from %s" % here
assert lib.startswith(os.path.realpath(prefix)), "libpccl loaded from %s" % lib
assert _native.status_string(13) == _native.lib.pccl_status_string(13).decode()
assert "disagree" in _native.status_string(13), _native.status_string(13)
print("pccl imported from %s, libpccl from %s" % (here, lib))
PY
