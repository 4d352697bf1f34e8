/* main.c - pccl-mpibench: a plain MPI benchmark (no pccl in it) of
 * MPI_Allgather, MPI_Reduce_scatter_block, MPI_Allreduce, MPI_Bcast and
 * MPI_Reduce (root 0) on float32 sums, or on another predefined datatype
 * and op (-t TYPE:OP), MPI_Barrier (-c barrier: one row, 0 bytes), and
 * MPI_Scan and MPI_Exscan (-c scan,exscan), MPI_Allgatherv and
 * MPI_Reduce_scatter (-c allgatherv,reducescatterv: counts rising with the
 * rank, pccl-bench's), MPI_Gatherv and MPI_Scatterv (-c gatherv,scatterv:
 * the same counts, root 0), MPI_Alltoall, MPI_Gather and MPI_Scatter (-c
 * alltoall,gather,scatter: equal blocks, root 0) and MPI_Alltoallv (-c alltoallv: rank i sends
 * rank j the count of rank (j - i) mod nranks), and MPI_Iallreduce
 * overlapping computation (-c iallreduce: issue, then 16 chunks of
 * arithmetic on a private 4 KB array with an MPI_Test after each, then
 * MPI_Wait; the work is one pass over the array per 4 KB of the vector, so
 * it grows with the size, and its time counts in the row's time), and the
 * same way MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ibcast,
 * MPI_Ireduce (root 0), MPI_Ibarrier, MPI_Igather and MPI_Iscatter (root
 * 0), MPI_Ialltoall, MPI_Iscan and MPI_Iexscan (-c iallgather,
 * ireducescatter, ibroadcast, ireduce, ibarrier, igather, iscatter,
 * ialltoall, iscan, iexscan; the work sized by the call's buffer),
 * for timing an MPI program with and without libpccl_mpi.so preloaded
 * (scripts/dropin-bench.sh runs both and prints the ratios). Sizes and bus
 * bandwidth follow nccl-tests and pccl-bench: all-gather, reduce-scatter and
 * the v-collectives' sizes are the whole (nranks x block, or nranks x the
 * mean) buffer, the others' the vector.
 * Each point: warm-up, an iteration count that fills ~0.2 s, then the best
 * of `rounds` blocks, each block timed by its slowest rank.
 *   pccl-mpibench [-b MIN] [-e MAX]
 *                 [-c allgather,reducescatter,allreduce,broadcast,reduce,barrier,scan,exscan,
 *                     allgatherv,reducescatterv,gatherv,scatterv,alltoallv,iallreduce,
 *                     iallgather,ireducescatter,ibroadcast,ireduce,ibarrier,igather,
 *                     iscatter,ialltoall,iscan,iexscan,alltoall,gather,scatter]
 *                 [-t TYPE:OP] [-r ROUNDS] [--csv FILE]
 * TYPE: float double int short char byte c_bool float_int double_int 2int;
 * OP: sum prod min max land lor lxor band bor bxor maxloc minloc. Sizes
 * count whole elements at the type's extent (16 bytes for double_int). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  ALLGATHER, REDUCESCATTER, ALLREDUCE, BROADCAST, REDUCE, BARRIER, SCAN, EXSCAN, ALLGATHERV,
  REDUCESCATTERV, GATHERV, SCATTERV, ALLTOALLV, IALLREDUCE, IALLGATHER, IREDUCESCATTER,
  IBROADCAST, IREDUCE, IBARRIER, IGATHER, ISCATTER, IALLTOALL, ISCAN, IEXSCAN, ALLTOALL, GATHER,
  SCATTER, NCOLLS
} coll_t;
static const char *const coll_names[NCOLLS] = {
    "allgather", "reducescatter", "allreduce",  "broadcast",  "reduce",         "barrier",
    "scan",      "exscan",        "allgatherv", "reducescatterv", "gatherv",    "scatterv",
    "alltoallv", "iallreduce",    "iallgather", "ireducescatter", "ibroadcast", "ireduce",
    "ibarrier",  "igather",       "iscatter",   "ialltoall",      "iscan",      "iexscan",
    "alltoall",  "gather",        "scatter"};
/* -c's list, for its error */
#define COLL_LIST                                                                               \
  "allgather, reducescatter, allreduce, broadcast, reduce, barrier, scan, exscan, allgatherv, " \
  "reducescatterv, gatherv, scatterv, alltoallv, iallreduce, iallgather, ireducescatter, "     \
  "ibroadcast, ireduce, ibarrier, igather, iscatter, ialltoall, iscan, iexscan, alltoall, "   \
  "gather, scatter"

static int rank, nranks;

static void die(const char *msg) {
  if (rank == 0) fprintf(stderr, "pccl-mpibench: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* "64K", "1M", "8" -> bytes. */
static size_t parse_size(const char *text) {
  char *end;
  double v = strtod(text, &end);
  double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
              : *end == 'G' || *end == 'g' ? 1073741824.0 : 1.0;
  if (end == text || v <= 0 || (unit > 1.0 && end[1] != '\0') || (unit == 1.0 && *end != '\0'))
    die("sizes look like 1K, 64M or 4096");
  return (size_t)(v * unit);
}

/* The datatype and op every call uses (-t). */
static MPI_Datatype dtype;
static MPI_Op op;
static MPI_Aint extent;

static void parse_type(const char *spec) {
  static const struct { const char *name; MPI_Datatype dt; } types[] = {
      {"float", MPI_FLOAT}, {"double", MPI_DOUBLE}, {"int", MPI_INT},
      {"short", MPI_SHORT}, {"char", MPI_CHAR}, {"byte", MPI_BYTE},
      {"c_bool", MPI_C_BOOL}, {"float_int", MPI_FLOAT_INT}, {"double_int", MPI_DOUBLE_INT},
      {"2int", MPI_2INT}};
  static const struct { const char *name; MPI_Op op; } ops[] = {
      {"sum", MPI_SUM}, {"prod", MPI_PROD}, {"min", MPI_MIN}, {"max", MPI_MAX},
      {"land", MPI_LAND}, {"lor", MPI_LOR}, {"lxor", MPI_LXOR}, {"band", MPI_BAND},
      {"bor", MPI_BOR}, {"bxor", MPI_BXOR}, {"maxloc", MPI_MAXLOC}, {"minloc", MPI_MINLOC}};
  size_t len = strcspn(spec, ":");
  int t = -1, o = -1;
  for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
    if (strlen(types[i].name) == len && !strncmp(spec, types[i].name, len)) t = i;
  for (int i = 0; spec[len] == ':' && i < (int)(sizeof ops / sizeof ops[0]); i++)
    if (!strcmp(spec + len + 1, ops[i].name)) o = i;
  if (t < 0 || o < 0) die("-t takes TYPE:OP, as float:sum, short:band, c_bool:lor or double_int:maxloc");
  dtype = types[t].dt, op = ops[o].op;
}

/* The v-collectives' counts for a mean of `count` per rank: a ramp, rank r
 * about 2 (r + 1) / (p + 1) times the mean, summing to p x count (as
 * pccl-bench -c allgatherv); the blocks packed. MPI_Alltoallv's: rank i
 * sends rank j vcounts[(j - i) mod p] (as pccl-bench -c alltoallv), so that
 * every rank sends and receives p x count; this rank's row (scounts) and
 * column (rcounts), packed. */
static int *vcounts, *vdispls, *scounts, *sdispls, *rcounts, *rdispls;

static void set_vcounts(int count) {
  long left = (long)count * nranks;
  for (int r = 0; r < nranks; r++) {
    vcounts[r] = r + 1 < nranks ? (int)((long)count * 2 * (r + 1) / (nranks + 1)) : (int)left;
    left -= vcounts[r];
    vdispls[r] = r ? vdispls[r - 1] + vcounts[r - 1] : 0;
  }
  for (int r = 0; r < nranks; r++) {
    scounts[r] = vcounts[(r - rank + nranks) % nranks];
    rcounts[r] = vcounts[(rank - r + nranks) % nranks];
    sdispls[r] = r ? sdispls[r - 1] + scounts[r - 1] : 0;
    rdispls[r] = r ? rdispls[r - 1] + rcounts[r - 1] : 0;
  }
}

/* -c iallreduce's computation: one of 16 chunks of the work for a vector
 * of `bytes`, one pass over a private 4 KB array per 4 KB of the vector. */
static float work[1024];
static volatile float work_sink;

static void compute_chunk(size_t bytes) {
  size_t passes = bytes / 4096 / 16 + 1;
  float acc = 0;
  for (size_t p = 0; p < passes; p++)
    for (int i = 0; i < 1024; i++) acc = acc * 0.999f + work[i] * 1.0001f;
  work_sink = acc;
}

/* A non-blocking collective overlapping computation sized by `bytes`, the
 * call's buffer. */
static void overlapped(coll_t coll, void *send, void *recv, int count, size_t bytes) {
  MPI_Request req;
  int done = 0;
  switch (coll) {
  case IALLGATHER: MPI_Iallgather(send, count, dtype, recv, count, dtype, MPI_COMM_WORLD, &req); break;
  case IREDUCESCATTER:
    MPI_Ireduce_scatter_block(send, recv, count, dtype, op, MPI_COMM_WORLD, &req);
    break;
  case IBROADCAST: MPI_Ibcast(recv, count, dtype, 0, MPI_COMM_WORLD, &req); break;
  case IREDUCE: MPI_Ireduce(send, recv, count, dtype, op, 0, MPI_COMM_WORLD, &req); break;
  case IBARRIER: MPI_Ibarrier(MPI_COMM_WORLD, &req); break;
  case IGATHER: MPI_Igather(send, count, dtype, recv, count, dtype, 0, MPI_COMM_WORLD, &req); break;
  case ISCATTER: MPI_Iscatter(send, count, dtype, recv, count, dtype, 0, MPI_COMM_WORLD, &req); break;
  case IALLTOALL: MPI_Ialltoall(send, count, dtype, recv, count, dtype, MPI_COMM_WORLD, &req); break;
  case ISCAN: MPI_Iscan(send, recv, count, dtype, op, MPI_COMM_WORLD, &req); break;
  case IEXSCAN: MPI_Iexscan(send, recv, count, dtype, op, MPI_COMM_WORLD, &req); break;
  default: MPI_Iallreduce(send, recv, count, dtype, op, MPI_COMM_WORLD, &req); break;
  }
  for (int chunk = 0; chunk < 16; chunk++) {
    compute_chunk(bytes);
    if (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void run_once(coll_t coll, void *send, void *recv, int count) {
  switch (coll) {
  case IALLREDUCE:
  case IBROADCAST:
  case IREDUCE:
  case IBARRIER:
  case ISCAN:
  case IEXSCAN: overlapped(coll, send, recv, count, (size_t)count * (size_t)extent); break;
  case IALLGATHER:
  case IREDUCESCATTER:
  case IGATHER:
  case ISCATTER:
  case IALLTOALL:
    overlapped(coll, send, recv, count, (size_t)count * (size_t)extent * (size_t)nranks);
    break;
  case ALLGATHERV:
    MPI_Allgatherv(send, vcounts[rank], dtype, recv, vcounts, vdispls, dtype, MPI_COMM_WORLD);
    break;
  case REDUCESCATTERV: MPI_Reduce_scatter(send, recv, vcounts, dtype, op, MPI_COMM_WORLD); break;
  case GATHERV:
    MPI_Gatherv(send, vcounts[rank], dtype, recv, vcounts, vdispls, dtype, 0, MPI_COMM_WORLD);
    break;
  case SCATTERV:
    MPI_Scatterv(send, vcounts, vdispls, dtype, recv, vcounts[rank], dtype, 0, MPI_COMM_WORLD);
    break;
  case ALLTOALLV:
    MPI_Alltoallv(send, scounts, sdispls, dtype, recv, rcounts, rdispls, dtype, MPI_COMM_WORLD);
    break;
  case ALLGATHER: MPI_Allgather(send, count, dtype, recv, count, dtype, MPI_COMM_WORLD); break;
  case ALLTOALL: MPI_Alltoall(send, count, dtype, recv, count, dtype, MPI_COMM_WORLD); break;
  case GATHER: MPI_Gather(send, count, dtype, recv, count, dtype, 0, MPI_COMM_WORLD); break;
  case SCATTER: MPI_Scatter(send, count, dtype, recv, count, dtype, 0, MPI_COMM_WORLD); break;
  case REDUCESCATTER: MPI_Reduce_scatter_block(send, recv, count, dtype, op, MPI_COMM_WORLD); break;
  case BROADCAST: MPI_Bcast(recv, count, dtype, 0, MPI_COMM_WORLD); break;
  case REDUCE: MPI_Reduce(send, recv, count, dtype, op, 0, MPI_COMM_WORLD); break;
  case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
  case SCAN: MPI_Scan(send, recv, count, dtype, op, MPI_COMM_WORLD); break;
  case EXSCAN: MPI_Exscan(send, recv, count, dtype, op, MPI_COMM_WORLD); break;
  default: MPI_Allreduce(send, recv, count, dtype, op, MPI_COMM_WORLD); break;
  }
}

/* -c's comma list: every name must be one of coll_names. */
static void parse_colls(const char *list, int want[NCOLLS]) {
  for (int c = 0; c < NCOLLS; c++) want[c] = 0;
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    int found = 0;
    for (int c = 0; c < NCOLLS; c++)
      if (strlen(coll_names[c]) == len && !strncmp(p, coll_names[c], len)) want[c] = found = 1;
    if (!found)
      die("-c takes a comma list of " COLL_LIST);
    p += len + (p[len] == ',');
  }
  int any = 0;
  for (int c = 0; c < NCOLLS; c++) any |= want[c];
  if (!any) die("-c names no collective");
}

/* Seconds per call over `iters` calls, the slowest rank's. */
static double time_block(coll_t coll, void *send, void *recv, int count, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) run_once(coll, send, recv, count);
  t = (MPI_Wtime() - t) / iters;
  double slowest;
  MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Bcast(&slowest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t min_bytes = 1024, max_bytes = 64u << 20;
  int rounds = 3, want[NCOLLS] = {1, 1, 1, 1, 1};
  const char *csv_path = NULL, *type_spec = "float:sum";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-b") && v) min_bytes = parse_size(v), i++;
    else if (!strcmp(a, "-e") && v) max_bytes = parse_size(v), i++;
    else if (!strcmp(a, "-r") && v) rounds = atoi(v), i++;
    else if (!strcmp(a, "--csv") && v) csv_path = v, i++;
    else if (!strcmp(a, "-c") && v) parse_colls(v, want), i++;
    else if (!strcmp(a, "-t") && v) type_spec = v, i++;
    else die("usage: pccl-mpibench [-b MIN] [-e MAX] [-c COLLS] [-t TYPE:OP] [-r ROUNDS] [--csv FILE]");
  }
  if (rounds < 1 || rounds > 100 || min_bytes > max_bytes) die("bad -r, -b or -e");
  parse_type(type_spec);
  MPI_Aint lb;
  MPI_Type_get_extent(dtype, &lb, &extent);
  size_t max_bytes_alloc = max_bytes + (size_t)nranks * (size_t)extent;
  unsigned char *send = malloc(max_bytes_alloc), *recv = malloc(max_bytes_alloc);
  vcounts = malloc(6 * sizeof(int) * (size_t)nranks);
  vdispls = vcounts + nranks, scounts = vcounts + 2 * nranks, sdispls = vcounts + 3 * nranks;
  rcounts = vcounts + 4 * nranks, rdispls = vcounts + 5 * nranks;
  if (!send || !recv || !vcounts) die("out of memory");
  /* small values (0 or 1 for bool, which holds nothing else) in every byte */
  int is_bool = dtype == MPI_C_BOOL;
  for (size_t i = 0; i < max_bytes_alloc; i++) send[i] = (unsigned char)(is_bool ? i % 2 : i % 7), recv[i] = 0;
  FILE *csv = rank == 0 && csv_path ? fopen(csv_path, "w") : NULL;
  if (rank == 0 && csv_path && !csv) die("cannot write the CSV file");
  if (csv) fprintf(csv, "collective,nranks,bytes,time_us,busbw_gbs\n");
  if (rank == 0) printf("# pccl-mpibench: %d ranks, %s, best of %d rounds\n", nranks, type_spec, rounds);

  for (int c = 0; c < NCOLLS; c++) {
    if (!want[c]) continue;
    if (rank == 0) printf("\n# %s\n%12s %12s %12s\n", coll_names[c], "bytes", "time_us", "busbw");
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      int vcoll = c == ALLGATHERV || c == REDUCESCATTERV || c == GATHERV || c == SCATTERV ||
                  c == ALLTOALLV;
      int blocks = c == ALLGATHER || c == REDUCESCATTER || c == IALLGATHER || c == IREDUCESCATTER ||
                   c == IGATHER || c == ISCATTER || c == IALLTOALL || c == ALLTOALL ||
                   c == GATHER || c == SCATTER;
      size_t per = blocks || vcoll ? (size_t)nranks : 1;
      int count = (int)(bytes / (size_t)extent / per);
      int barrier = c == BARRIER || c == IBARRIER;
      if (vcoll) set_vcounts(count);
      if (barrier && bytes != min_bytes) break; /* it moves nothing: one row, 0 bytes */
      if (count == 0 && !barrier) continue;
      for (int i = 0; i < 3; i++) run_once((coll_t)c, send, recv, count);
      double once = time_block((coll_t)c, send, recv, count, 1);
      int iters = once > 0 ? (int)(0.2 / once) + 1 : 1000;
      if (iters > 1000) iters = 1000;
      double best = 1e30;
      for (int r = 0; r < rounds; r++) {
        double t = time_block((coll_t)c, send, recv, count, iters);
        if (t < best) best = t;
      }
      double n = nranks, factor = c == ALLREDUCE || c == IALLREDUCE ? 2 * (n - 1) / n
                                : c == BROADCAST || c == REDUCE || c == SCAN || c == EXSCAN ||
                                          c == IBROADCAST || c == IREDUCE || c == ISCAN ||
                                          c == IEXSCAN
                                    ? 1.0
                                    : (n - 1) / n;
      double sized = barrier ? 0.0 : (double)count * (double)extent * (double)per;
      double busbw = sized / best / 1e9 * factor;
      if (rank == 0) printf("%12.0f %12.2f %12.3f\n", sized, best * 1e6, busbw);
      if (csv) fprintf(csv, "%s,%d,%.0f,%.3f,%.4f\n", coll_names[c], nranks, sized, best * 1e6, busbw);
    }
  }
  if (csv) fclose(csv);
  free(send), free(recv), free(vcounts);
  MPI_Finalize();
  return 0;
}
