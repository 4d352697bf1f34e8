# Measured by pccl-profile on node0, 2026-11-24 19:37:30 UTC: 16 ranks on 8 nodes (MPI shared-memory split).
# Methods: docs/profiler.md; 9 repetitions (median), G sweep 65536 to 16777216 bytes.
# intra: rank 0 <-> rank 1; 1-byte half round trip 2.53411e-05 s.
# inter: rank 0 <-> rank 2; 1-byte half round trip 6.03875e-05 s.
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
gamma 6.5282568335507961e-11
copy 4.1118904948214297e-11
compress 6.6666666666666664e-10
decompress 4.0000000000000001e-10
intra.L 2.4239835663206761e-05
intra.o_s 2.0000000000626613e-08
intra.o_r 1.0809999999998767e-06
intra.g 8.5638392857139668e-07
intra.G 2.1433679275172433e-10
inter.L 5.070812474967749e-05
inter.o_s 6.0089999998624855e-06
inter.o_r 3.6549999998802818e-06
inter.g 2.3076309821428482e-05
inter.G 1.5395250579551553e-08
