/* profile_tool.h - the parts of pccl-profile, the MPI program that measures
 * a machine's LogGP parameters per network level and writes a profile for
 * the simulator (docs/profiler.md, docs/profile-format.md): options, the
 * node layout and the pairs it measures, the point-to-point measurements,
 * the local per-byte costs, statistics, and the report. */
#ifndef PCCL_PROFILE_TOOL_H
#define PCCL_PROFILE_TOOL_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "sim.h"

#define PROF_MAX_POINTS 32  /* sizes of the G sweep */

/* Exit statuses. */
enum { PROF_EXIT_OK = 0, PROF_EXIT_FAIL = 1, PROF_EXIT_USAGE = 2 };

typedef struct {
  const char *out_path;
  char name[PCCL_PROFILE_TEXT];
  int reps;        /* repetitions of every measurement; the median is kept */
  size_t min_size; /* smallest message of the G sweep, bytes */
  size_t max_size; /* largest message of the G sweep, bytes */
  int loaded;      /* ranks outside the pair poll instead of sleeping */
  int node_radix;  /* written as given; 0: no limit */
  int host_cores;  /* nodes on one host of this many cores: measure host_message; 0: no */
  int help;
} prof_options_t;

/* Parses argv into o (defaults first). Returns PROF_EXIT_OK, or
 * PROF_EXIT_USAGE with a message in err. */
int prof_parse_options(int argc, char **argv, prof_options_t *o, char *err, size_t errlen);
void prof_print_usage(FILE *out);

/* Where the ranks are: nodes from MPI's shared-memory split, or
 * PCCL_RANKS_PER_NODE consecutive ranks per node as the library does. */
typedef struct {
  int size;                    /* ranks in MPI_COMM_WORLD */
  int nnodes;                  /* nodes */
  int ranks_per_node;          /* ranks on rank 0's node */
  long fake_per_node;          /* PCCL_RANKS_PER_NODE; 0: unset */
  int peer[PCCL_LEVEL_COUNT];  /* the rank paired with rank 0; -1: none */
  /* The host measurement's pairs: the i-th ranks of nodes 2j and 2j + 1 (in
   * the order of their lowest ranks) */
  int partner;                 /* this rank's; -1: none */
  int npartnered;              /* ranks with one */
} prof_layout_t;

/* Collective over MPI_COMM_WORLD. PROF_EXIT_OK, or PROF_EXIT_USAGE with a
 * message in err for a malformed PCCL_RANKS_PER_NODE. */
int prof_find_layout(prof_layout_t *lay, char *err, size_t errlen);

/* What was measured on one level; seconds (G, seconds per byte). */
typedef struct {
  int peer;                     /* -1: no pair, copied from the other level */
  double half_rtt;              /* of a 1-byte ping-pong */
  double L, o_s, o_r, g, G;
  double burst_short, burst_long; /* median time of a burst of 1-byte messages */
  int L_clamped, g_clamped, G_clamped; /* the estimate was negative; 0 kept */
  int npoints;                  /* the G sweep: half round trips by size */
  size_t size[PROF_MAX_POINTS];
  double time[PROF_MAX_POINTS];
} prof_level_t;

/* Measure one level on `pair`, a communicator of two ranks whose rank 0 is
 * world rank 0; the results are valid on that rank only. The overheads
 * (o_s, o_r: the cost of one call) come first; the timings (half round
 * trip, g, G, and L from all of them) after. */
void prof_measure_overheads(MPI_Comm pair, const prof_options_t *o, prof_level_t *out);
void prof_measure_timings(MPI_Comm pair, const prof_options_t *o, prof_level_t *out);

/* The shared host (--host-cores): every partnered rank exchanges 1-byte
 * messages with its partner at once (all), then rank 0 and its partner alone
 * while the others poll (one); median seconds per exchange, on rank 0. */
typedef struct {
  double all, one;
  double message; /* host_cores x all / npartnered: one message's core time */
} prof_host_t;
void prof_measure_host(const prof_options_t *o, const prof_layout_t *lay, prof_host_t *out);

/* Rank-local costs per byte: memcpy and a float32 a[i] = b[i] + c[i] loop
 * over 64 MiB, the best of `reps` (at least 3). PROF_EXIT_FAIL when out of
 * memory. */
int prof_measure_local(int reps, double *copy, double *gamma);

/* Statistics. prof_median sorts v. prof_slope: least-squares slope of y
 * over x (0 when fewer than 2 distinct x). */
double prof_median(double *v, size_t n);
double prof_slope(const double *x, const double *y, size_t n);

/* MPI helpers: abort with a message when rc is not MPI_SUCCESS; a barrier
 * that sleeps while it waits (so idle ranks leave the cores to the
 * measuring pair), or with `poll` set polls without pause as a rank inside
 * a collective does (so the pair shares the cores as it would there); the
 * cost of reading the clock; exit everywhere. */
void prof_mpi_check(int rc, const char *what);
#define PROF_MPI(call) prof_mpi_check((call), #call)
void prof_idle_barrier(MPI_Comm comm, int poll);
double prof_clock_overhead(void);
void prof_die(const char *fmt, ...);

/* The profile from the measurements, the table on stdout and the file.
 * PROF_EXIT_OK or PROF_EXIT_FAIL (message on stderr). Rank 0 only. */
int prof_report(const prof_options_t *o, const prof_layout_t *lay,
                const prof_level_t level[PCCL_LEVEL_COUNT], const prof_host_t *host,
                double copy, double gamma);

#endif /* PCCL_PROFILE_TOOL_H */
