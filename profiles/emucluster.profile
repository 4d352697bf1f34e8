# Measured by pccl-profile on node0, 2026-11-23 15:09:22 UTC: 4 ranks on 2 nodes (MPI shared-memory split).
# Methods: docs/profiler.md; 9 repetitions (median), G sweep 65536 to 16777216 bytes.
# intra: rank 0 <-> rank 1; 1-byte half round trip 4.32191e-06 s.
# inter: rank 0 <-> rank 2; 1-byte half round trip 1.54482e-05 s.
# Not measured, left at defaults: nics_per_node 1, device_radix 0, node_radix 0 (0: no limit).
# NOTE: inter.L clamped to 0: half round trip < o_s + o_r + G
# pccl machine profile (docs/profile-format.md); seconds, seconds per byte
name emucluster-1gbit
source pccl-profile (docs/profiler.md): 4 ranks on 2 nodes (MPI shared-memory split); intra 0-1; inter 0-2
ranks_per_node 2
nics_per_node 1
device_radix 0
node_radix 0
gamma 1.7806446552275379e-10
copy 7.1181744337080473e-11
intra.L 1.9767475235962529e-06
intra.o_s 1.4100000000019906e-07
intra.o_r 2.2040000000002638e-06
intra.g 1.0654196428572263e-07
intra.G 1.674764032786058e-10
inter.L 0
inter.o_s 7.4290000000309941e-06
inter.o_r 8.6965000000160941e-06
inter.g 1.004288214285731e-05
inter.G 8.6112230105116889e-09
