# Measured by pccl-profile on node0, 2026-11-29 09:50:42 UTC: 16 ranks on 8 nodes (MPI shared-memory split).
# Methods: docs/profiler.md; 9 repetitions (median), G sweep 65536 to 16777216 bytes.
# intra: rank 0 <-> rank 1; 1-byte half round trip 2.17883e-05 s.
# inter: rank 0 <-> rank 2; 1-byte half round trip 4.67507e-05 s.
# Loaded: the other ranks polled MPI without pause while each pair timed the
# round trip, g and G; they slept while it timed o_s and o_r.
# Host: 16 ranks exchanged 1 byte between nodes at once in 0.000102508 s (rank 0's pair
# alone: 7.52343e-05 s); host_message = 2 cores x that / 16.
# Not measured: nics_per_node 1, device_radix 0 (defaults), node_radix 1 (given by --node-radix) (0: no limit);
# compress, decompress: szp on the development machine (docs/profile-format.md).
# pccl machine profile (docs/profile-format.md); seconds, seconds per byte
name emucluster-1gbit-host
source pccl-profile (docs/profiler.md): 16 ranks on 8 nodes (MPI shared-memory split); intra 0-1; inter 0-2; loaded
ranks_per_node 2
nics_per_node 1
device_radix 0
node_radix 1
gamma 2.0633959770203044e-10
copy 1.4635276794435583e-10
compress 6.6666666666666664e-10
decompress 4.0000000000000001e-10
host_cores 2
host_message 1.2813468750000005e-05
intra.L 2.0923095958921693e-05
intra.o_s 2.7000000000231998e-08
intra.o_r 8.3700000000019206e-07
intra.g 8.9171874999968312e-07
intra.G 1.2240410775219206e-09
inter.L 3.8213611527197284e-05
inter.o_s 3.4945000000341508e-06
inter.o_r 5.0345000003337859e-06
inter.g 1.0172087499999468e-05
inter.G 8.1284724347969672e-09
