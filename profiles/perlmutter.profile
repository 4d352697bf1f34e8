# NERSC Perlmutter GPU partition (HPE Cray EX): one rank per GPU, 4 NVIDIA
# A100 per node, 4 HPE Slingshot-11 NICs per node. Format:
# docs/profile-format.md.
#
# Bandwidths are published peaks; the latencies, overheads and gaps are
# ESTIMATES of the right order, not measurements: replace them with the
# profiler's numbers for real predictions. Every line says which it is.
#
# Sources:
#   https://docs.nersc.gov/systems/perlmutter/architecture/ (4x A100 and 4x Slingshot 11 NICs per GPU node)
#   NVIDIA A100 datasheet: 12 NVLink3 links, 600 GB/s total; HBM2 1555 GB/s (40 GB model)
#   https://github.com/EESSI/software-layer/pull/716 (osu_bw 93 GB/s between NV4-linked A100s, another site)
#   ../shared/papers/piccl-parameterized-algorithms.txt Sec. IV-D (device radix 8, node radix 1 on Delta)
name perlmutter
source NERSC Perlmutter architecture page; NVIDIA A100 NVLink3 spec; PiCCL paper radices; estimates marked

ranks_per_node 4    # 4x A100 per GPU node (NERSC "Perlmutter Architecture", System Specifications)
nics_per_node 4     # 4x HPE Slingshot 11 (Cassini) NICs per GPU node (NERSC "Perlmutter Architecture")
device_radix 8      # ESTIMATE: PiCCL paper, Sec. IV-D, used 8 on Delta (4x A100 + Slingshot per node)
node_radix 1        # ESTIMATE: PiCCL paper, Sec. IV-D, used 1 on Delta (one NIC per node there; per NIC here)

# Local work on the GPU: A100 40GB HBM2 at 1555 GB/s (NVIDIA A100 datasheet).
# A reduction moves 3 bytes per byte (two reads, one write), a copy 2.
gamma 518GB/s
copy 777GB/s

# Inside a node: NVLink 3. An A100 has 12 links, 25 GB/s per direction each
# (600 GB/s total, NVIDIA A100 spec); fully connected to its 3 peers, each
# pair gets 4 links = 100 GB/s per direction (osu_bw measured 93 GB/s between
# two NV4-connected A100s on another site, EESSI software-layer PR #716).
intra.L 1us         # ESTIMATE: GPU-to-GPU latency inside a node, order of a few microseconds end to end with o_s, o_r
intra.o_s 0.5us     # ESTIMATE: per-message send overhead of GPU-aware MPI / NCCL-style send
intra.o_r 0.5us     # ESTIMATE: per-message receive overhead
intra.g 0.5us       # ESTIMATE: gap between messages (o_s <= g, as PiCCL's model assumes)
intra.G 100GB/s     # 4 NVLink3 links per GPU pair, per direction, peak

# Between nodes: HPE Slingshot-11, 200 Gb/s = 25 GB/s per NIC and direction
# (NERSC Perlmutter architecture page: Slingshot 11, 3-hop dragonfly).
inter.L 1.5us       # ESTIMATE: wire + up to 3 switch hops; with o_s + o_r gives ~2.5 us one-way, the order of published Slingshot-11 MPI latencies
inter.o_s 0.5us     # ESTIMATE: per-message send overhead
inter.o_r 0.5us     # ESTIMATE: per-message receive overhead
inter.g 0.5us       # ESTIMATE: gap between messages of one rank (message rate ~2 M/s)
inter.G 25GB/s      # 200 Gb/s Slingshot-11 NIC, per direction, peak (NERSC Perlmutter architecture page)
