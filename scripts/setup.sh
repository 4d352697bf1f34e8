#!/usr/bin/env bash
# setup.sh - installs what building and testing pccl needs, when missing:
# a C compiler, make, CMake, pkg-config and an MPI (Open MPI by default;
# PCCL_SETUP_MPI=mpich picks MPICH). Also, optionally, ZFP (the codec anchor,
# libzfp-dev), clang (the decoder's libFuzzer target), gfortran and Debian's
# mpi4py and numpy (the MPI drop-in's Fortran and Python tests), PyTorch and
# scikit-learn (the Python package's tests and examples) and valgrind (make
# test-valgrind): installed as root, only mentioned otherwise (the build and
# tests go on without them). Uses
# Debian/Ubuntu packages via apt-get when run as root; otherwise says what to
# install.
set -euo pipefail

mpi=${PCCL_SETUP_MPI:-openmpi}
case "$mpi" in
  openmpi) mpi_pkgs="openmpi-bin libopenmpi-dev"; mpi_cc=mpicc.openmpi ;;
  mpich) mpi_pkgs="mpich libmpich-dev"; mpi_cc=mpicc.mpich ;;
  *) echo "setup.sh: PCCL_SETUP_MPI must be openmpi or mpich, not '$mpi'" >&2; exit 2 ;;
esac

missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v "$mpi_cc" >/dev/null 2>&1 || missing+=($mpi_pkgs)
optional=()
[ -f /usr/include/zfp.h ] || optional+=(libzfp-dev)
command -v clang >/dev/null 2>&1 || optional+=(clang)
command -v gfortran >/dev/null 2>&1 || optional+=(gfortran)
command -v valgrind >/dev/null 2>&1 || optional+=(valgrind)
/usr/bin/python3 -c 'import mpi4py, numpy' >/dev/null 2>&1 || optional+=(python3-mpi4py python3-numpy)
/usr/bin/python3 -c 'import torch, sklearn' >/dev/null 2>&1 || optional+=(python3-torch python3-sklearn)
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  [ ${#optional[@]} -eq 0 ] || echo "setup.sh: optional, not installed: ${optional[*]}" >&2
  optional=()
fi
[ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0

if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: missing: ${missing[*]}" >&2
  echo "Install them, e.g.: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
if [ ${#missing[@]} -gt 0 ] && ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: missing ${missing[*]} and no apt-get here; install them with your package manager" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || [ ${#missing[@]} -eq 0 ] || exit 1
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Optional packages must not fail the set-up: the build and tests go on
# without them (ZFP's codec row is left out, the fuzz, Fortran and Python
# tests skip, the PyTorch ones too).
if [ ${#optional[@]} -gt 0 ]; then
  echo "setup.sh: installing optional ${optional[*]}"
  apt-get install -y -qq "${optional[@]}" >/dev/null ||
    echo "setup.sh: could not install ${optional[*]}; going on without them" >&2
fi
