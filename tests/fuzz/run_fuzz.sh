#!/bin/sh
# run_fuzz.sh BUILD_DIR SECONDS - builds pccl's libFuzzer targets with
# AddressSanitizer and UBSan: the codec's (fuzz_decompress, fuzz_roundtrip,
# from the codec's sources, seeded with compressed generated arrays) and the
# text parsers' (fuzz_parsers: PCCL_ALGO, numeric variables, tuning tables,
# profiles; from every MPI-free source, seeded with the repository's tables
# and profiles), and runs each for SECONDS seconds. BUILD_DIR is a configured CMake build (for the
# generated pccl_version.h); everything goes to BUILD_DIR/fuzz, the corpora
# grow there from run to run, and a crashing input is saved there as
# crash-<target>-*.
# Exit: 0 nothing found; 1 a target crashed or failed a check (or the build
# failed); 77 no clang or no libFuzzer runtime (CTest shows a skip).
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 1
secs=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
out=$build/fuzz
mkdir -p "$out"

if ! command -v "$cc" >/dev/null 2>&1; then
  echo "run_fuzz: $cc not found (set CLANG=...); skipping"
  exit 77
fi
if [ ! -f "$build/include/pccl_version.h" ]; then
  echo "run_fuzz: $build/include/pccl_version.h missing: configure $build with cmake first" >&2
  exit 1
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
  >"$out/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
  echo "run_fuzz: $cc cannot link -fsanitize=fuzzer,address,undefined (no libFuzzer runtime?); skipping"
  cat "$out/probe.log"
  exit 77
fi

# The codec and what it needs, without ZFP (libzfp is not instrumented),
# compiled once and linked into the seed maker and both targets.
inc="-I$src/include -I$build/include -I$src/src/compress -I$src/src/base -I$src/src/core -I$src/src/kernels"
inc="$inc -I$src/src/algo -I$src/src/sched" # config.h's declarations
flags="-O1 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -fno-sanitize-recover=all $inc"
san="-fsanitize=fuzzer-no-link,address,undefined"
set -e
mkdir -p "$out/obj"
objs=
for f in src/compress/codec.c src/compress/szi.c src/compress/szp.c src/compress/zfp.c src/compress/parts.c \
         src/base/errmsg.c src/base/parse.c src/base/names.c tools/common/datagen.c; do
  o="$out/obj/$(basename "$f" .c).o"
  # shellcheck disable=SC2086
  "$cc" $flags $san -c "$src/$f" -o "$o"
  [ "$f" = tools/common/datagen.c ] || objs="$objs $o"
done
# shellcheck disable=SC2086
"$cc" $flags $san -I"$src/tools/common" "$src/tests/fuzz/make_seeds.c" "$out/obj/datagen.o" $objs \
  -lm -lpthread -o "$out/make_seeds"
for t in fuzz_decompress fuzz_roundtrip; do
  # shellcheck disable=SC2086
  "$cc" $flags -fsanitize=fuzzer,address,undefined "$src/tests/fuzz/$t.c" $objs -lm -lpthread -o "$out/$t"
done
rm -rf "$out/seeds_decompress" "$out/seeds_roundtrip"
mkdir -p "$out/seeds_decompress" "$out/seeds_roundtrip" "$out/corpus_decompress" "$out/corpus_roundtrip"
"$out/make_seeds" "$out/seeds_decompress" "$out/seeds_roundtrip"

# The parsers need the algorithm registry, the tables and the simulator's
# profiles: every source that needs no MPI (zfp.c, codec.c and the others
# above are already built) nor CUDA (exec_cuda.c).
pinc="$inc -I$src/src/tune -I$src/src/sim -I$src/src/exec -I$src/src/transport/mem"
pobjs=$objs
for f in "$src"/src/algo/*.c "$src"/src/sched/*.c "$src"/src/exec/exec.c "$src"/src/kernels/*.c \
         "$src"/src/tune/*.c "$src"/src/sim/*.c "$src"/src/transport/mem/*.c "$src/src/core/config.c"; do
  o="$out/obj/p_$(basename "$f" .c).o"
  # shellcheck disable=SC2086
  "$cc" $flags $pinc $san -c "$f" -o "$o"
  pobjs="$pobjs $o"
done
# shellcheck disable=SC2086
"$cc" $flags $pinc -fsanitize=fuzzer,address,undefined "$src/tests/fuzz/fuzz_parsers.c" $pobjs \
  -lm -lpthread -o "$out/fuzz_parsers"
rm -rf "$out/seeds_parsers"
mkdir -p "$out/seeds_parsers" "$out/corpus_parsers"
seed() { { printf "$1"; cat; } >"$out/seeds_parsers/$2"; }
printf 'allgather:ring,allreduce:recmul:4,reducescatter:kring:3' | seed '\000' algo
printf '42' | seed '\001' int
printf '2.5' | seed '\002' seconds
for f in "$src"/tests/mpi/*.tuning "$src"/profiles/*.tuning; do seed '\003' "tuning_$(basename "$f")" <"$f"; done
for f in "$src"/profiles/*.profile; do seed '\004' "profile_$(basename "$f")" <"$f"; done
set +e

status=0
for t in decompress roundtrip parsers; do
  echo "run_fuzz: fuzz_$t for $secs s"
  # libFuzzer's own error exit code is 77, which CTest would read as a skip.
  len=8192
  [ $t = parsers ] && len=16384 # the repository's profiles and tables are a few KB
  "$out/fuzz_$t" -max_total_time="$secs" -max_len=$len -timeout=10 -rss_limit_mb=2048 \
    -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
    -artifact_prefix="$out/crash-$t-" "$out/corpus_$t" "$out/seeds_$t" >"$out/fuzz_$t.log" 2>&1
  rc=$?
  grep -E '^(INFO: Seed|#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)' "$out/fuzz_$t.log"
  if [ $rc -ne 0 ]; then
    echo "run_fuzz: fuzz_$t FAILED (exit $rc); log $out/fuzz_$t.log:"
    tail -n 60 "$out/fuzz_$t.log"
    status=1
  fi
done
exit $status
