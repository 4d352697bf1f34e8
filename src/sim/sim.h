/* sim.h - the LogGP discrete-event simulator: runs the schedules the
 * executor would run (one per rank, from the same generators) on a model of a
 * machine and predicts the collective's time. Used by pccl-sim and by the
 * tuner; never on the call path.
 *
 * The machine (a profile, see docs/profile-format.md): LogGP parameters per
 * network level (inside a node, between nodes), a per-byte cost of reducing
 * and of copying locally, per-byte costs of compressing and decompressing
 * (the compressed collectives' COMPRESS / DECOMPRESS steps), the device radix
 * (sends, and receives, one rank keeps in flight before the next waits) and
 * the node radix (transfers one NIC of a node carries at once; rank l of a
 * node uses NIC l % nics). The model is described in docs/simulator.md. */
#ifndef PCCL_SIM_H
#define PCCL_SIM_H

#include <stdio.h>

#include "algo.h"

typedef enum { PCCL_LEVEL_INTRA = 0, PCCL_LEVEL_INTER = 1, PCCL_LEVEL_COUNT } pccl_level_t;

/* One network level, in seconds (G: seconds per byte). */
typedef struct {
  double L, o_s, o_r, g, G;
} pccl_loggp_t;

#define PCCL_PROFILE_TEXT 256

/* The profile keys `compress` and `decompress` are optional; absent, they
 * take these seconds per byte of uncompressed data: szp on one core of the
 * development machine (pccl-codec-bench, smooth 64 MiB float32 field:
 * compression ~1.5 GB/s, decompression 2.2 - 3.4 GB/s). */
#define PCCL_PROFILE_COMPRESS_DEFAULT (1.0 / 1.5e9)
#define PCCL_PROFILE_DECOMPRESS_DEFAULT (1.0 / 2.5e9)

typedef struct {
  char name[PCCL_PROFILE_TEXT];
  char source[PCCL_PROFILE_TEXT]; /* where the numbers come from */
  int ranks_per_node;             /* the machine's usual layout */
  int nics_per_node;
  int device_radix;  /* 0: unlimited */
  int node_radix;    /* per NIC; 0: unlimited */
  double gamma;      /* seconds per byte reduced */
  double copy;       /* seconds per byte copied inside a rank */
  double compress;   /* seconds per uncompressed byte compressed */
  double decompress; /* seconds per uncompressed byte decompressed */
  /* G between nodes is multiplied by this while the link also carries data
   * the other way (the sender's NIC receiving or the receiver's sending)
   * when a transfer starts; 0 or 1: full duplex */
  double duplex;
  /* Every node emulated on one host of host_cores cores (0: each node has
   * CPUs of its own): a message takes host_message seconds of one of those
   * cores before it goes on the wire, and waits for one to be free
   * (docs/simulator.md, "Nodes on one host") */
  int host_cores;
  double host_message;
  pccl_loggp_t level[PCCL_LEVEL_COUNT];
} pccl_profile_t;

/* Reads a profile file. On error returns PCCL_ERR_CONFIG (malformed: the
 * message names the line) or PCCL_ERR_INVALID_ARGUMENT (NULL argument, cannot
 * open), with a message in err (which may be NULL when errlen is 0). */
pccl_status_t pccl_profile_load(const char *path, pccl_profile_t *p, char *err, size_t errlen);
pccl_status_t pccl_profile_parse(const char *text, pccl_profile_t *p, char *err, size_t errlen);
/* Whether every field of p is within the bounds the format allows (a profile
 * built in memory): PCCL_OK or PCCL_ERR_CONFIG naming the field. */
pccl_status_t pccl_profile_check(const pccl_profile_t *p, char *err, size_t errlen);
/* Writes p in the format pccl_profile_load reads (numbers with 17
 * significant digits, so they read back identical). PCCL_ERR_INVALID_ARGUMENT
 * for NULL, PCCL_ERR_CONFIG when pccl_profile_check rejects p. */
pccl_status_t pccl_profile_write(FILE *f, const pccl_profile_t *p);

/* What to simulate: a collective on nranks ranks, ranks_per_node consecutive
 * ranks per node (the last node may hold fewer). `ratio` is the compression
 * ratio (uncompressed bytes / stream bytes, as pccl-codec-bench reports it)
 * assumed for every compressed stream a lossy algorithm sends: a stream of n
 * elements is ceil(n x elem_size / ratio) bytes. 0 means 1 (streams as large
 * as the data); otherwise it must be finite and >= 1. Plain algorithms send
 * no streams and ignore it. */
typedef struct {
  pccl_coll_t coll;
  const pccl_algo_t *algo;
  int k; /* the algorithm's parameter; 0: its default */
  int nranks, ranks_per_node;
  size_t count;     /* elements, as the collective's count argument */
  size_t elem_size; /* bytes */
  double ratio;     /* compressed streams: 0 or >= 1, see above */
  /* 1: simulate every rank. 0: where every node's schedules are node 0's
   * up to a renaming of the nodes (checked on a sample of nodes), simulate
   * node 0's ranks only, one per class of ranks that go through the same
   * states (src/sim/classes.c): always on a profile without radices, where
   * the prediction is the same, else only above 2^24 steps in all, where
   * the two may differ (sim.c). */
  int full;
  /* Called now and then on a long run (NULL: never): `phase` is
   * "generating" or "simulating", `done` of `total` ranks or steps. */
  void (*progress)(void *ctx, const char *phase, size_t done, size_t total);
  void *progress_ctx;
  /* 0: no limit. Otherwise the most steps a simulation may hold: a job
   * past it is run as classes where its schedules allow (as if above 2^24
   * on a profile with radices), and where they do not, pccl_sim_run stops
   * generating once past it and fails with PCCL_ERR_UNSUPPORTED and
   * over_max_steps set. pccl-tune leaves such candidates out rather than
   * spend minutes on one of them. */
  size_t max_steps;
} pccl_sim_case_t;

typedef struct {
  double seconds;     /* when the last rank finishes */
  size_t nmessages;   /* point-to-point messages of all ranks */
  size_t nsteps;      /* steps of all ranks */
  int classes;        /* ranks simulated, one per class; 0: every rank */
  int over_max_steps; /* 1: failed because the case's max_steps was passed */
  double gen_wall;    /* wall-clock seconds spent generating the schedules */
  double sim_wall;    /* wall-clock seconds spent matching and simulating */
  char message[PCCL_PROFILE_TEXT]; /* why pccl_sim_run failed; "" on success */
} pccl_sim_result_t;

/* Generates every rank's schedule for `c` (as the library would: not in
 * place, root 0, k = c->k or the algorithm's default) and simulates it on
 * `p`. Returns PCCL_OK; PCCL_ERR_INVALID_ARGUMENT (NULL, nranks or
 * ranks_per_node below 1, no algorithm or one of another collective, elem_size
 * 0, a k the algorithm does not take, a ratio neither 0 nor finite and >= 1);
 * PCCL_ERR_OVERFLOW (buffers larger than PTRDIFF_MAX); PCCL_ERR_CONFIG (p
 * fails pccl_profile_check); PCCL_ERR_NO_MEMORY; PCCL_ERR_UNSUPPORTED (more
 * than 2^32 - 2 steps or dependencies, or than c->max_steps, which sets
 * out->over_max_steps); a generator's own error;
 * PCCL_ERR_INTERNAL (sends and receives do not pair up, the schedules
 * deadlock, or a compressed slot has a size no element count gives).
 * out->message says what went wrong. */
pccl_status_t pccl_sim_run(const pccl_profile_t *p, const pccl_sim_case_t *c,
                           pccl_sim_result_t *out);

#endif /* PCCL_SIM_H */
