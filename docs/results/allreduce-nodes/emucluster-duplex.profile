# profiles/emucluster.profile with the duplex factor added (last line): issue 31, the per-link model of both directions busy
# Measured by pccl-profile on node0, 2026-11-24 21:05:27 UTC: 16 ranks on 8 nodes (MPI shared-memory split).
# Methods: docs/profiler.md; 9 repetitions (median), G sweep 65536 to 16777216 bytes.
# intra: rank 0 <-> rank 1; 1-byte half round trip 1.57196e-05 s.
# inter: rank 0 <-> rank 2; 1-byte half round trip 7.55182e-05 s.
# Loaded: the other ranks polled MPI without pause while each pair timed the
# round trip, g and G; they slept while it timed o_s and o_r.
# Not measured: nics_per_node 1, device_radix 0 (defaults), node_radix 1 (given by --node-radix) (0: no limit);
# compress, decompress: szp on the development machine (docs/profile-format.md).
# pccl machine profile (docs/profile-format.md); seconds, seconds per byte
name emucluster-1gbit
source pccl-profile (docs/profiler.md): 16 ranks on 8 nodes (MPI shared-memory split); intra 0-1; inter 0-2; loaded
ranks_per_node 2
nics_per_node 1
device_radix 0
node_radix 1
gamma 7.3358893394480049e-11
copy 5.0568506121640803e-11
compress 6.6666666666666664e-10
decompress 4.0000000000000001e-10
intra.L 1.4407257333154444e-05
intra.o_s 1.0000000000631791e-08
intra.o_r 1.302000000001459e-06
intra.g 5.5456428571427958e-07
intra.G 3.4766684350369294e-10
inter.L 6.4698611717255432e-05
inter.o_s 6.7700000001003069e-06
inter.o_r 4.0415000001070567e-06
inter.g 5.1932280357143327e-05
inter.G 8.0832825372178561e-09
duplex 1.6   # one-way over both-ways rate, tools/bench/pair_exchange.py at 1 Gbit/s (docs/emucluster.md)
