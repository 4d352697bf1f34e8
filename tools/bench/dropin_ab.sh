#!/usr/bin/env bash
# dropin_ab.sh NP COLLS MIN MAX OUTDIR OLDLIB - pccl-mpibench (plain MPI) on Open MPI
# alone, preloaded with OLDLIB (another build's libpccl_mpi.so) and with this
# build's, twice each, interleaved; writes OUTDIR/ab.csv with the best time of each
# and Open MPI's time over each preloaded one.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 6 ] || { echo "usage: tools/bench/dropin_ab.sh NP COLLS MIN MAX OUTDIR OLDLIB" >&2; exit 2; }
np=$1 colls=$2 min=$3 max=$4 out=$5 old=$6
mkdir -p "$out"
for pass in 1 2; do
  scripts/mpirun.sh -np $np build/bin/pccl-mpibench -b $min -e $max -c $colls -r 2 --csv $out/mpi$pass.csv >/dev/null
  scripts/mpirun.sh -np $np env LD_PRELOAD="$old" build/bin/pccl-mpibench -b $min -e $max -c $colls -r 2 --csv $out/old$pass.csv >/dev/null
  scripts/mpirun.sh -np $np env LD_PRELOAD=$PWD/build/lib/libpccl_mpi.so build/bin/pccl-mpibench -b $min -e $max -c $colls -r 2 --csv $out/new$pass.csv >/dev/null
done
awk -F, 'FNR==1{f=FILENAME; sub(/.*\//,"",f); sub(/[12].csv/,"",f); next} {k=$1","$3; if(!((f,k) in t) || $4<t[f,k]) t[f,k]=$4; keys[k]=1}
  END{print "collective,bytes,mpi_us,old_us,new_us,mpi_over_old,mpi_over_new"; for(k in keys) printf "%s,%.2f,%.2f,%.2f,%.2f,%.2f\n",k,t["mpi",k],t["old",k],t["new",k],t["mpi",k]/t["old",k],t["mpi",k]/t["new",k]}' $out/mpi1.csv $out/mpi2.csv $out/old1.csv $out/old2.csv $out/new1.csv $out/new2.csv | sort -t, -k1,1 -k2,2n > $out/ab.csv
cat $out/ab.csv
