#!/usr/bin/python3
"""test_timed_table.py - tools/plot/timed_table.py on a pccl-bench CSV file
written here: each algorithm's speedup, seg_cma's over the better path, a
size without all three algorithms (left out) and the summary line."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "plot", "timed_table.py")
HEAD = ("collective,algorithm,k,nranks,nnodes,bytes,time_us,algbw_gbs,busbw_gbs,"
        "mpi_time_us,speedup_vs_mpi,check\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        a = os.path.join(d, "a.csv")
        with open(a, "w") as f:
            f.write(HEAD)
            f.write("allreduce,seg_cma,0,2,1,65536,10,0,0,20,2.0000,ok\n")
            f.write("allreduce,seg,0,2,1,65536,16,0,0,20,1.2500,ok\n")
            f.write("allreduce,cma,0,2,1,65536,8,0,0,20,2.5000,ok\n")
            f.write("reduce,seg_cma,0,2,1,1048576,10,0,0,11,1.1000,ok\n")
            f.write("reduce,seg,0,2,1,1048576,10,0,0,10,1.0000,ok\n")
            f.write("reduce,cma,0,2,1,1048576,10,0,0,8,0.8000,ok\n")
            f.write("broadcast,seg_cma,0,2,1,16384,1,0,0,2,2.0000,ok\n")  # no seg, cma: left out
        out = subprocess.run([sys.executable, SCRIPT, a], capture_output=True, text=True,
                             check=True).stdout.replace(a, "A").splitlines()
    want = [
        "| run | collective | size | seg_cma | seg | cma | seg_cma / better |",
        "|---|---|---|---|---|---|---|",
        "| A | allreduce | 64 KB | 2.00 | 1.25 | 2.50 | 0.80 |",
        "| A | reduce | 1 MB | 1.10 | 1.00 | 0.80 | 1.10 |",
        "",
        "2 points: seg_cma / better path median 1.10, lowest 0.80; within 10% at 1",
    ]
    if out != want:
        print("FAIL timed_table.py printed:\n" + "\n".join(out))
        print("0 passed, 1 failed")
        return 1
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
