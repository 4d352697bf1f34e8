#!/usr/bin/env bash
# mpi4py_matches.sh LIB: succeeds when Debian's mpi4py and numpy import and
# mpi4py's extension links libLIB.so (the MPI this build uses: Debian builds
# mpi4py on Open MPI, so a build on MPICH skips the mpi4py tests).
set -eu
/usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null
ext=$(/usr/bin/python3 -c 'import glob, os, mpi4py; print(glob.glob(os.path.join(os.path.dirname(mpi4py.__file__), "MPI*.so"))[0])')
ldd "$ext" | grep -q "lib$1\.so"
