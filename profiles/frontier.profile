# OLCF Frontier (HPE Cray EX235a): one rank per GCD, 8 GCDs per node (4 AMD
# MI250X), 4 HPE Slingshot-11 NICs per node. Format: docs/profile-format.md.
#
# Bandwidths are published peaks; the latencies, overheads and gaps are
# ESTIMATES of the right order, not measurements: replace them with the
# profiler's numbers for real predictions. Every line says which it is.
#
# Sources:
#   https://docs.olcf.ornl.gov/systems/frontier_user_guide.html (node: 8 GCDs, 4 NICs, IF 200 / 50-100 GB/s)
#   https://rocm.docs.amd.com/en/latest/reference/gpu-arch/mi250.html (xGMI link: 25 GT/s x16 = 50 GB/s)
#   AMD Instinct MI250X spec: 3.2 TB/s HBM2E per MI250X (two GCDs)
#   https://alcf.anl.gov/support-center/aurora/interconnect (Slingshot: 200 Gb/s ports, 3-hop dragonfly)
#   ../shared/papers/piccl-parameterized-algorithms.txt Sec. IV-D (device radix 8, node radix 1 on Delta)
name frontier
source OLCF Frontier User Guide; AMD CDNA2/MI250 docs; PiCCL paper radices; estimates marked

ranks_per_node 8    # 8 GCDs per node, each one GPU to software (OLCF Frontier User Guide, "Frontier Compute Nodes")
nics_per_node 4     # 4 Slingshot-11 NICs per node, one per MI250X (OLCF Frontier User Guide node diagram)
device_radix 8      # ESTIMATE: PiCCL paper, Sec. IV-D, used 8 on Delta (A100 + Slingshot); not measured on MI250X
node_radix 1        # ESTIMATE: PiCCL paper, Sec. IV-D, used 1 (per NIC here) on Delta; not measured on Frontier

# Local work on the GCD: HBM2E at 3.2 TB/s per MI250X = 1.6 TB/s per GCD
# (AMD MI250X spec). A reduction moves 3 bytes per byte (two reads, one
# write): 1.6 TB/s / 3; a copy 2 bytes: 1.6 TB/s / 2. Derived from peaks.
gamma 533GB/s
copy 800GB/s

# Inside a node: Infinity Fabric GPU-GPU. One xGMI link is 50 GB/s per
# direction (25 GT/s x16; AMD MI250 microarchitecture docs). GCD pairs on one
# MI250X have 200 GB/s, pairs on different MI250X 50-100 GB/s (OLCF Frontier
# User Guide); a ring over the 8 GCDs crosses single links, so G is one link.
intra.L 1us         # ESTIMATE: GPU-to-GPU latency inside a node, order of a few microseconds end to end with o_s, o_r
intra.o_s 0.5us     # ESTIMATE: per-message send overhead of GPU-aware MPI / RCCL-style send
intra.o_r 0.5us     # ESTIMATE: per-message receive overhead
intra.g 0.5us       # ESTIMATE: gap between messages (o_s <= g, as PiCCL's model assumes)
intra.G 50GB/s      # one xGMI link per direction, peak (AMD MI250 docs; OLCF guide: 50-100 GB/s between MI250X)

# Between nodes: HPE Slingshot-11, 200 Gb/s = 25 GB/s per NIC and direction
# (OLCF Frontier User Guide; Rosetta switch ports are 200 Gb/s, ALCF Slingshot
# page); dragonfly, at most 3 switch-to-switch hops.
inter.L 1.5us       # ESTIMATE: wire + up to 3 switch hops; with o_s + o_r gives ~2.5 us one-way, the order of published Slingshot-11 MPI latencies
inter.o_s 0.5us     # ESTIMATE: per-message send overhead
inter.o_r 0.5us     # ESTIMATE: per-message receive overhead
inter.g 0.5us       # ESTIMATE: gap between messages of one rank (message rate ~2 M/s)
inter.G 25GB/s      # 200 Gb/s Slingshot-11 NIC, per direction, peak (OLCF Frontier User Guide)
