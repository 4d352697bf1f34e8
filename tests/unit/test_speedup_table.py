#!/usr/bin/python3
"""test_speedup_table.py - tools/plot/speedup_table.py on pccl-bench CSV
files written here: the table's cells, a size measured in two files, a row
without an MPI time (left out) and each collective's smallest speedup."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "plot", "speedup_table.py")
HEAD = ("collective,algorithm,k,nranks,nnodes,bytes,time_us,algbw_gbs,busbw_gbs,"
        "mpi_time_us,speedup_vs_mpi,check\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.csv"), os.path.join(d, "b.csv")
        with open(a, "w") as f:
            f.write(HEAD)
            f.write("allgather,auto:seg,0,2,1,8,0.1,0,0,0.4,4.0000,ok\n")
            f.write("allreduce,auto:seg,0,2,1,8,0.1,0,0,0.5,5.0000,ok\n")
            f.write("allreduce,auto:ring,0,2,1,1048576,100,0,0,90,0.9000,ok\n")
            f.write("allreduce,recdbl,0,2,1,2048,1,0,0,,,ok\n")  # no MPI time: left out
        with open(b, "w") as f:
            f.write(HEAD)
            f.write("allreduce,auto:ring,0,2,1,1048576,50,0,0,60,1.2000,ok\n")
        out = subprocess.run([sys.executable, SCRIPT, a, b], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    want = [
        "| size | allreduce | allgather |",
        "|---|---|---|",
        "| 8 B | 5.00x seg | 4.00x seg |",
        "| 1 MB | 0.90x ring / 1.20x ring |  |",
        "| smallest | 0.90x at 1 MB | 4.00x at 8 B |",
    ]
    bad = [(w, g) for w, g in zip(want, out) if w != g]
    if len(out) != len(want) or bad:
        print("FAIL speedup_table.py printed:\n" + "\n".join(out))
        print("0 passed, 1 failed")
        return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
