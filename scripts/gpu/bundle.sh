#!/usr/bin/env bash
# bundle.sh - packs what the GPU checks need into .gpu/ (ignored by git), for
# a machine that has a GPU and CUDA but no MPI and no network (the lent
# device machine): this build's CUDA-enabled tests and benchmarks, libpccl,
# and Debian's Open MPI with the libraries it loads, relocated by
# .gpu/env.sh (OPAL_* and PMIX_* install-directory variables). Build first
# (make build, with nvcc on PATH); then carry .gpu and run
# scripts/gpu/checks.sh there. Usage: scripts/gpu/bundle.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -x "$build/bin/test_cuda_coll" ] || { echo "bundle.sh: $build has no CUDA tests (build with nvcc on PATH)" >&2; exit 2; }
rm -rf .gpu && mkdir -p .gpu/root .gpu/bin .gpu/lib
# Open MPI's files, minus documentation and what a run does not read
for p in openmpi-bin libopenmpi3 openmpi-common libpmix2; do dpkg -L "$p"; done | sort -u |
  while read -r f; do
    case "$f" in /usr/share/doc*|/usr/share/man*|/usr/share/lintian*|*/include/*|*/pkgconfig/*) continue ;; esac
    [ -f "$f" ] || continue
    mkdir -p ".gpu/root$(dirname "$f")" && cp -L "$f" ".gpu/root$f"
  done
cp -a /etc/openmpi .gpu/root/etc 2>/dev/null || { mkdir -p .gpu/root/etc && cp -a /etc/openmpi .gpu/root/etc/; }
ln -s orterun .gpu/root/usr/bin/mpirun
# shared libraries: one copy each, in .gpu/lib (LD_LIBRARY_PATH)
lib=.gpu/root/usr/lib/x86_64-linux-gnu
find "$lib" -maxdepth 1 -type f -name 'lib*.so*' -delete
find "$lib/openmpi/lib" "$lib/pmix2/lib" -maxdepth 1 -type f -name 'lib*' -delete
progs=(test_cuda_runtime test_cuda_kernels test_cuda_szp test_cuda_coll pccl-bench
       pccl-kernel-bench-gpu pccl-codec-bench-gpu)
for p in "${progs[@]}"; do cp "$build/bin/$p" .gpu/bin/; done
cp -L "$build/lib/libpccl.so.0" .gpu/lib/
system='libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|linux-vdso|libstdc\+\+|libgcc_s|libresolv'
{ for p in "${progs[@]}"; do ldd ".gpu/bin/$p"; done
  find .gpu/root /usr/lib/x86_64-linux-gnu/libmpi.so.40 -type f -name '*.so*' -exec ldd {} \; 2>/dev/null
  ldd /usr/lib/x86_64-linux-gnu/libmpi.so.40; } |
  awk '/=> \// {print $3}' | grep -vE "$system" | grep -v "/$build/\|\.gpu/" | sort -u |
  while read -r f; do cp -L "$f" .gpu/lib/; done
find .gpu -type f \( -name '*.so*' -o -path '.gpu/bin/*' -o -path '*/usr/bin/*' \) \
  -exec strip --strip-unneeded {} \; 2>/dev/null || true
printf '#!/usr/bin/env bash\nexec mpirun --oversubscribe --bind-to none "$@"\n' >.gpu/bin/mr
chmod +x .gpu/bin/mr
cat >.gpu/env.sh <<'ENV'
# Sourced on the GPU machine: pccl's GPU build and Debian's Open MPI from .gpu/
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
R=$B/root/usr
P=$R/lib/x86_64-linux-gnu/pmix2
export OPAL_PREFIX=$R OPAL_EXEC_PREFIX=$R OPAL_BINDIR=$R/bin OPAL_SBINDIR=$R/sbin OPAL_LIBEXECDIR=$R/libexec \
  OPAL_DATAROOTDIR=$R/share OPAL_DATADIR=$R/share OPAL_SYSCONFDIR=$B/root/etc/openmpi \
  OPAL_LIBDIR=$R/lib/x86_64-linux-gnu/openmpi/lib OPAL_INCLUDEDIR=$R/include
export PMIX_PREFIX=$P PMIX_EXEC_PREFIX=$P PMIX_LIBDIR=$P/lib PMIX_PKGLIBDIR=$P/lib/pmix \
  PMIX_DATADIR=$P/share PMIX_PKGDATADIR=$P/share/pmix PMIX_SYSCONFDIR=$P/etc
export HWLOC_PLUGINS_PATH=$B/none
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$B/bin:$R/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
ENV
du -sh .gpu
