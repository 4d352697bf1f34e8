# Measured by pccl-profile on node0, 2026-11-29 09:50:53 UTC: 16 ranks on 4 nodes (MPI shared-memory split).
# Methods: docs/profiler.md; 9 repetitions (median), G sweep 65536 to 16777216 bytes.
# intra: rank 0 <-> rank 1; 1-byte half round trip 1.49805e-05 s.
# inter: rank 0 <-> rank 4; 1-byte half round trip 4.27874e-05 s.
# Loaded: the other ranks polled MPI without pause while each pair timed the
# round trip, g and G; they slept while it timed o_s and o_r.
# Host: 16 ranks exchanged 1 byte between nodes at once in 9.27069e-05 s (rank 0's pair
# alone: 7.55866e-05 s); host_message = 2 cores x that / 16.
# Not measured: nics_per_node 1, device_radix 0 (defaults), node_radix 1 (given by --node-radix) (0: no limit);
# compress, decompress: szp on the development machine (docs/profile-format.md).
# pccl machine profile (docs/profile-format.md); seconds, seconds per byte
name emucluster-1gbit-host
source pccl-profile (docs/profiler.md): 16 ranks on 4 nodes (MPI shared-memory split); intra 0-1; inter 0-4; loaded
ranks_per_node 4
nics_per_node 1
device_radix 0
node_radix 1
gamma 2.1457481384275081e-10
copy 1.5202778577804474e-10
compress 6.6666666666666664e-10
decompress 4.0000000000000001e-10
host_cores 2
host_message 1.1588366249999372e-05
intra.L 1.424311651353814e-05
intra.o_s 2.7999999999705642e-08
intra.o_r 7.0900000000034507e-07
intra.g 4.8717857142859619e-07
intra.G 3.3348646184282611e-10
inter.L 3.4130707108623404e-05
inter.o_s 3.4589999999834475e-06
inter.o_r 5.1894999999468894e-06
inter.g 1.7541875892857339e-05
inter.G 8.1478914459008805e-09
