#!/usr/bin/env bash
# mpirun.sh - runs an MPI program on this machine with the settings a
# developer's box needs: more ranks than cores (Open MPI: --oversubscribe and
# yielding when idle), and Open MPI's consent to run as root. Works with
# Open MPI and MPICH. Usage: scripts/mpirun.sh -np N program [args...]
set -euo pipefail
launcher=${MPIEXEC:-mpiexec}
if "$launcher" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
  exec "$launcher" --oversubscribe "$@"
fi
exec "$launcher" "$@"
