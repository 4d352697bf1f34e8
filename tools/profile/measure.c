/* measure.c - pccl-profile's point-to-point measurements between two ranks
 * (docs/profiler.md): a 1-byte ping-pong (half round trip = o_s + G + L +
 * o_r), the send call of a 1-byte message at the sender (o_s), the receive
 * call of a 1-byte message that has already arrived (o_r), bursts of 1-byte
 * messages of two lengths (g: the slope, time per extra message) and a
 * ping-pong sweep of large messages (G: the least-squares slope of the half
 * round trip over bytes). Pair rank 0 (world rank 0) times everything and
 * keeps the results; every measurement is warmed up, repeated and reduced
 * to its median. The overheads (o_s, o_r) and the timings (the rest) are
 * two calls, so that the idle ranks may poll during the timings alone. */
#include <stdlib.h>
#include <string.h>

#include "profile_tool.h"

#define TAG_DATA 1
#define TAG_ACK 2
#define WARMUP 10             /* untimed rounds before each measurement */
#define SMALL_ITERS 100       /* 1-byte round trips per repetition */
#define CALL_SAMPLES 20       /* single-call timings per repetition (o_s, o_r) */
#define BURST_SHORT 16        /* messages of the short and the long burst */
#define BURST_LONG 128
#define BURST_ITERS 10        /* bursts per repetition */
#define SWEEP_BYTES ((size_t)4 << 20) /* bytes per repetition and size, G sweep */
#define ARRIVAL_SLACK 20e-6   /* extra wait before o_r's receive, seconds */

typedef struct {
  MPI_Comm comm;
  int me;        /* 0: the timing rank */
  char *buf;     /* max_size bytes */
  int reps;
  double tick;   /* cost of reading the clock */
  MPI_Request *reqs; /* BURST_LONG */
} pair_t;

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) prof_die("out of memory (%zu bytes)", n);
  return p;
}

static void send_to(pair_t *p, size_t n, int tag) {
  PROF_MPI(MPI_Send(p->buf, (int)n, MPI_BYTE, 1 - p->me, tag, p->comm));
}

static void recv_from(pair_t *p, size_t n, int tag) {
  PROF_MPI(MPI_Recv(p->buf, (int)n, MPI_BYTE, 1 - p->me, tag, p->comm, MPI_STATUS_IGNORE));
}

static void spin(double seconds) {
  double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

/* ---- ping-pong --------------------------------------------------------------- */

static void round_trips(pair_t *p, size_t m, int iters) {
  for (int i = 0; i < iters; i++) {
    if (p->me == 0) {
      send_to(p, m, TAG_DATA);
      recv_from(p, m, TAG_DATA);
    } else {
      recv_from(p, m, TAG_DATA);
      send_to(p, m, TAG_DATA);
    }
  }
}

/* Median over the repetitions of the mean half round trip of m bytes. */
static double half_round_trip(pair_t *p, size_t m, int iters) {
  double *t = xmalloc((size_t)p->reps * sizeof *t);
  round_trips(p, m, iters < WARMUP ? iters : WARMUP);
  for (int r = 0; r < p->reps; r++) {
    PROF_MPI(MPI_Barrier(p->comm));
    double t0 = MPI_Wtime();
    round_trips(p, m, iters);
    t[r] = (MPI_Wtime() - t0) / (2.0 * iters);
  }
  double med = prof_median(t, (size_t)p->reps);
  free(t);
  return med;
}

/* ---- overheads ---------------------------------------------------------------- */

/* Rank 0 times MPI_Send of one byte; each send waits for the previous one's
 * acknowledgement, so it finds the connection idle. */
static double send_overhead(pair_t *p) {
  size_t n = (size_t)p->reps * CALL_SAMPLES;
  double *t = xmalloc(n * sizeof *t);
  for (size_t i = 0; i < n + WARMUP; i++) {
    if (p->me == 0) {
      double t0 = MPI_Wtime();
      send_to(p, 1, TAG_DATA);
      double dt = MPI_Wtime() - t0 - p->tick;
      if (i >= WARMUP) t[i - WARMUP] = dt > 0 ? dt : 0;
      recv_from(p, 0, TAG_ACK);
    } else {
      recv_from(p, 1, TAG_DATA);
      send_to(p, 0, TAG_ACK);
    }
  }
  double med = prof_median(t, n);
  free(t);
  return med;
}

/* Rank 0 waits `delay` (much longer than the message needs to arrive),
 * then times the MPI_Recv that picks the message up. */
static double recv_overhead(pair_t *p, double delay) {
  size_t n = (size_t)p->reps * CALL_SAMPLES;
  double *t = xmalloc(n * sizeof *t);
  PROF_MPI(MPI_Barrier(p->comm));
  for (size_t i = 0; i < n + WARMUP; i++) {
    if (p->me == 0) {
      spin(delay);
      double t0 = MPI_Wtime();
      recv_from(p, 1, TAG_DATA);
      double dt = MPI_Wtime() - t0 - p->tick;
      if (i >= WARMUP) t[i - WARMUP] = dt > 0 ? dt : 0;
      send_to(p, 0, TAG_ACK);
    } else {
      send_to(p, 1, TAG_DATA);
      recv_from(p, 0, TAG_ACK);
    }
  }
  double med = prof_median(t, n);
  free(t);
  return med;
}

/* ---- gap ----------------------------------------------------------------------- */

/* One burst: the receiver pre-posts n receives and says so; rank 0 sends n
 * one-byte messages back to back and waits for the acknowledgement that all
 * arrived. Returns rank 0's time from the first send to the acknowledgement. */
static double one_burst(pair_t *p, int n) {
  if (p->me == 0) {
    recv_from(p, 0, TAG_ACK);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) send_to(p, 1, TAG_DATA);
    recv_from(p, 0, TAG_ACK);
    return MPI_Wtime() - t0;
  }
  for (int i = 0; i < n; i++)
    PROF_MPI(MPI_Irecv(p->buf + i, 1, MPI_BYTE, 0, TAG_DATA, p->comm, &p->reqs[i]));
  send_to(p, 0, TAG_ACK);
  PROF_MPI(MPI_Waitall(n, p->reqs, MPI_STATUSES_IGNORE));
  send_to(p, 0, TAG_ACK);
  return 0;
}

/* Median over the repetitions of the mean time of a burst of n messages. */
static double burst_time(pair_t *p, int n) {
  double *t = xmalloc((size_t)p->reps * sizeof *t);
  for (int i = 0; i < WARMUP / 2; i++) one_burst(p, n);
  for (int r = 0; r < p->reps; r++) {
    double sum = 0;
    for (int i = 0; i < BURST_ITERS; i++) sum += one_burst(p, n);
    t[r] = sum / BURST_ITERS;
  }
  double med = prof_median(t, (size_t)p->reps);
  free(t);
  return med;
}

/* ---- G sweep --------------------------------------------------------------------- */

/* Sizes from min_size doubling up to max_size, max_size included. */
static int sweep_sizes(size_t min_size, size_t max_size, size_t *size) {
  int n = 0;
  size_t s = min_size;
  for (; s <= max_size && n < PROF_MAX_POINTS - 1; s *= 2) size[n++] = s;
  if (size[n - 1] < max_size) size[n++] = max_size;
  return n;
}

static void sweep(pair_t *p, size_t min_size, size_t max_size, prof_level_t *out) {
  out->npoints = sweep_sizes(min_size, max_size, out->size);
  double x[PROF_MAX_POINTS];
  for (int i = 0; i < out->npoints; i++) {
    size_t m = out->size[i], iters = SWEEP_BYTES / m;
    out->time[i] = half_round_trip(p, m, iters < 1 ? 1 : (int)iters);
    x[i] = (double)m;
  }
  out->G = prof_slope(x, out->time, (size_t)out->npoints);
  out->G_clamped = out->G < 0;
  if (out->G_clamped) out->G = 0;
}

/* ---- the level ------------------------------------------------------------------- */

static void pair_open(pair_t *p, MPI_Comm comm, const prof_options_t *o) {
  *p = (pair_t){.comm = comm, .reps = o->reps};
  PROF_MPI(MPI_Comm_rank(comm, &p->me));
  p->buf = xmalloc(o->max_size);
  memset(p->buf, 0, o->max_size);
  p->reqs = xmalloc(BURST_LONG * sizeof *p->reqs);
  p->tick = prof_clock_overhead();
}

static void pair_close(pair_t *p) {
  free(p->reqs);
  free(p->buf);
}

void prof_measure_overheads(MPI_Comm pair, const prof_options_t *o, prof_level_t *out) {
  pair_t p;
  pair_open(&p, pair, o);
  double half_rtt = half_round_trip(&p, 1, SMALL_ITERS);
  out->o_s = send_overhead(&p);
  /* Only rank 0 waits, so only its estimate of the round trip matters. */
  out->o_r = recv_overhead(&p, 4 * half_rtt + ARRIVAL_SLACK);
  pair_close(&p);
}

void prof_measure_timings(MPI_Comm pair, const prof_options_t *o, prof_level_t *out) {
  pair_t p;
  pair_open(&p, pair, o);
  out->half_rtt = half_round_trip(&p, 1, SMALL_ITERS);
  out->burst_short = burst_time(&p, BURST_SHORT);
  out->burst_long = burst_time(&p, BURST_LONG);
  out->g = (out->burst_long - out->burst_short) / (BURST_LONG - BURST_SHORT);
  out->g_clamped = out->g < 0;
  if (out->g_clamped) out->g = 0;
  sweep(&p, o->min_size, o->max_size, out);
  out->L = out->half_rtt - out->o_s - out->o_r - out->G;
  out->L_clamped = out->L < 0;
  if (out->L_clamped) out->L = 0;
  pair_close(&p);
}
