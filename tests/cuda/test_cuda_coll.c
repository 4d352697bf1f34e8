/* test_cuda_coll.c - collectives on device buffers (several processes may
 * share one GPU): every collective, the prefix reductions included (an
 * exscan's rank 0 keeps its receive buffer), in place or not, over datatypes
 * and ops that cover wrap-around, 16-bit floats, bitwise ops, (value, index)
 * pairs and the AVG division, at counts that leave tails; and the
 * all-gatherv, reduce-scatterv, gatherv, scatterv and all-to-allv of uneven
 * blocks (packed or placed apart, every rank's root-only arguments NULL but
 * the root's). Each device
 * result must equal, bit for bit, the same call on host buffers run by the
 * same algorithm (on a second communicator: the node segment, which a host
 * call may get, reduces in another order), which tests/mpi checks against
 * independent references; inputs are made on the host and copied up. The
 * plain collectives run again with odd ranks on host buffers and the others
 * on device buffers in the same call. Also: one rank's host sendbuf with
 * its device recvbuf is refused, and compressed calls on device
 * buffers say they are not built. Without a device every rank says why and
 * exits 77 (skipped).
 *   mpiexec -n N test_cuda_coll */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"

static int g_rank, g_size, g_failed, g_passed;
static pccl_comm_t *g_ref; /* the host calls: forced to what the device call ran */

static void expect(int ok, const char *what) {
  if (ok) {
    g_passed++;
    return;
  }
  if (++g_failed < 30) printf("rank %d: FAIL %s\n", g_rank, what);
}

static void *dmalloc(size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
    printf("rank %d: cudaMalloc(%zu) failed\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

static void fill(uint8_t *b, size_t bytes, unsigned seed) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t i = 0; i < bytes; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b[i] = (uint8_t)(x >> 24) & 0x3F; /* small values: finite 16-bit floats, no NaN */
  }
}

/* Ranks that differ: with g_mixed, odd ranks pass host buffers where the
 * others pass device buffers (every rank must still take one algorithm). */
static int g_mixed;

static int on_device(void) { return !(g_mixed && g_rank % 2); }

static void *balloc(size_t bytes) { return on_device() ? dmalloc(bytes) : malloc(bytes ? bytes : 1); }

static void bfree(void *p) {
  if (on_device()) cudaFree(p);
  else free(p);
}

typedef struct {
  pccl_coll_t coll;
  int send_blocks, recv_blocks; /* buffers of p x count */
} shape_t;

static const shape_t shapes[] = {
    {PCCL_COLL_ALLGATHER, 0, 1}, {PCCL_COLL_REDUCE_SCATTER, 1, 0}, {PCCL_COLL_ALLREDUCE, 0, 0},
    {PCCL_COLL_BROADCAST, 0, 0}, {PCCL_COLL_REDUCE, 0, 0},         {PCCL_COLL_SCATTER, 1, 0},
    {PCCL_COLL_GATHER, 0, 1},    {PCCL_COLL_ALLTOALL, 1, 1},      {PCCL_COLL_SCAN, 0, 0},
    {PCCL_COLL_EXSCAN, 0, 0},
};

static pccl_status_t call(pccl_coll_t coll, const void *s, void *r, size_t n, pccl_dtype_t t,
                          pccl_op_t op, int root, pccl_comm_t *comm) {
  switch (coll) {
    case PCCL_COLL_ALLGATHER: return pccl_allgather(s, r, n, t, comm);
    case PCCL_COLL_REDUCE_SCATTER: return pccl_reduce_scatter(s, r, n, t, op, comm);
    case PCCL_COLL_ALLREDUCE: return pccl_allreduce(s, r, n, t, op, comm);
    case PCCL_COLL_BROADCAST: return pccl_broadcast(s, r, n, t, root, comm);
    case PCCL_COLL_REDUCE: return pccl_reduce(s, r, n, t, op, root, comm);
    case PCCL_COLL_SCATTER: return pccl_scatter(s, r, n, t, root, comm);
    case PCCL_COLL_GATHER: return pccl_gather(s, r, n, t, root, comm);
    case PCCL_COLL_SCAN: return pccl_scan(s, r, n, t, op, comm);
    case PCCL_COLL_EXSCAN: return pccl_exscan(s, r, n, t, op, comm);
    default: return pccl_alltoall(s, r, n, t, comm);
  }
}

/* One call on host buffers and the same on device buffers; in place, the
 * send buffer is the receive buffer's block of this rank (or the root's)
 * where the layout has blocks, else the receive buffer itself. */
static void one(const shape_t *sh, pccl_dtype_t t, pccl_op_t op, size_t n, int inplace, int root,
                pccl_comm_t *comm) {
  size_t es = pccl_dtype_size(t), p = (size_t)g_size;
  size_t sb = (sh->send_blocks ? p : 1) * n * es, rb = (sh->recv_blocks ? p : 1) * n * es;
  size_t big = sb > rb ? sb : rb;
  uint8_t *hs = malloc(big), *hr = malloc(big), *got = malloc(big);
  fill(hs, big, (unsigned)(g_rank * 131 + n));
  memcpy(hr, hs, big);
  uint8_t *ds = balloc(big), *dr = balloc(big);
  cudaMemcpy(ds, hs, big, cudaMemcpyDefault);
  cudaMemcpy(dr, hr, big, cudaMemcpyDefault);
  size_t off = 0;
  int inp = inplace && sh->coll != PCCL_COLL_ALLTOALL;
  if (inp && (sh->send_blocks || sh->recv_blocks)) {
    int owner = sh->coll == PCCL_COLL_SCATTER || sh->coll == PCCL_COLL_GATHER ? root : g_rank;
    off = (size_t)owner * n * es;
  }
  const void *hsend = inp ? (sh->recv_blocks ? hr + off : hr) : hs;
  void *hrecv = inp && sh->send_blocks ? hs + off : hr;
  const void *dsend = inp ? (sh->recv_blocks ? dr + off : dr) : ds;
  void *drecv = inp && sh->send_blocks ? ds + off : dr;
  if (inp && sh->send_blocks) hsend = hs, dsend = ds; /* recv lies inside send */
  pccl_status_t b = call(sh->coll, dsend, drecv, n, t, op, root, comm);
  char algo[80];
  snprintf(algo, sizeof algo, "%s", b == PCCL_OK ? pccl_comm_last_algo(comm) : "auto");
  pccl_status_t f = pccl_comm_set_algo(g_ref, sh->coll, algo);
  pccl_status_t a = call(sh->coll, hsend, hrecv, n, t, op, root, g_ref);
  char what[200];
  snprintf(what, sizeof what, "%s %s %s n=%zu%s root=%d%s: host %s, device %s (%s)", pccl_coll_name(sh->coll),
           pccl_dtype_name(t), pccl_op_name(op), n, inp ? " in place" : "", root,
           g_mixed ? (on_device() ? " mixed, device here" : " mixed, host here") : "", pccl_status_string(a),
           pccl_status_string(b), b == PCCL_OK ? algo : pccl_last_error(comm));
  expect(f == PCCL_OK && a == PCCL_OK && b == PCCL_OK, what);
  /* compare everything the call may write: the whole of both buffers */
  cudaMemcpy(got, dr, big, cudaMemcpyDefault);
  expect(memcmp(got, hr, big) == 0, what);
  cudaMemcpy(got, ds, big, cudaMemcpyDefault);
  expect(memcmp(got, hs, big) == 0, what);
  bfree(ds), bfree(dr);
  free(hs), free(hr), free(got);
}

/* An all-gatherv on device buffers against the same on host buffers:
 * uneven counts with an empty block, packed (NULL displs) or in reverse rank
 * order with gaps, in place or not. */
static void one_v(pccl_dtype_t t, size_t base, int placed, int inplace, pccl_comm_t *comm) {
  size_t es = pccl_dtype_size(t), counts[64], displs[64], at = 0;
  for (int r = 0; r < g_size; r++) counts[r] = r % 3 == 1 ? 0 : base * (size_t)(r % 2 + 1);
  for (int r = g_size - 1; r >= 0; r--) displs[r] = at + 2, at += 2 + counts[r];
  if (!placed)
    for (int r = 0, a = 0; r < g_size; a += (int)counts[r++]) displs[r] = (size_t)a;
  size_t rb = (placed ? at : displs[g_size - 1] + counts[g_size - 1]) * es + es, sb = counts[g_rank] * es + es;
  uint8_t *hs = malloc(sb), *hr = malloc(rb), *got = malloc(rb);
  fill(hr, rb, (unsigned)(g_rank * 17 + base));
  fill(hs, sb, (unsigned)(g_rank * 31 + base));
  uint8_t *ds = dmalloc(sb), *dr = dmalloc(rb);
  cudaMemcpy(ds, hs, sb, cudaMemcpyHostToDevice);
  cudaMemcpy(dr, hr, rb, cudaMemcpyHostToDevice);
  const size_t *d = placed ? displs : NULL;
  size_t off = displs[g_rank] * es;
  pccl_status_t b = pccl_allgatherv(inplace ? dr + off : ds, dr, counts, d, t, comm);
  char algo[80];
  snprintf(algo, sizeof algo, "%s", b == PCCL_OK ? pccl_comm_last_algo(comm) : "auto");
  pccl_status_t f = pccl_comm_set_algo(g_ref, PCCL_COLL_ALLGATHERV, algo);
  if (f != PCCL_OK) f = pccl_comm_set_algo(g_ref, PCCL_COLL_ALLGATHER, algo); /* equal counts */
  pccl_status_t a = pccl_allgatherv(inplace ? hr + off : hs, hr, counts, d, t, g_ref);
  char what[200];
  snprintf(what, sizeof what, "allgatherv %s base %zu%s%s: host %s, device %s (%s)", pccl_dtype_name(t),
           base, placed ? " placed" : "", inplace ? " in place" : "", pccl_status_string(a),
           pccl_status_string(b), b == PCCL_OK ? algo : pccl_last_error(comm));
  expect(a == PCCL_OK && b == PCCL_OK, what);
  cudaMemcpy(got, dr, rb, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hr, rb) == 0, what);
  cudaFree(ds), cudaFree(dr);
  free(hs), free(hr), free(got);
}

/* A reduce-scatterv on device buffers against the same on host buffers:
 * uneven counts with an empty block, in place or not. */
static void one_rsv(pccl_dtype_t t, pccl_op_t op, size_t base, int inplace, pccl_comm_t *comm) {
  size_t es = pccl_dtype_size(t), counts[64], total = 0, at = 0;
  for (int r = 0; r < g_size; r++) {
    counts[r] = r % 3 == 1 ? 0 : base * (size_t)(r % 2 + 1);
    if (r == g_rank) at = total;
    total += counts[r];
  }
  size_t sb = total * es + es, rb = counts[g_rank] * es + es;
  uint8_t *hs = malloc(sb), *hr = malloc(rb), *got = malloc(sb);
  fill(hs, sb, (unsigned)(g_rank * 7 + base));
  fill(hr, rb, (unsigned)(g_rank * 3 + base));
  uint8_t *ds = dmalloc(sb), *dr = dmalloc(rb);
  cudaMemcpy(ds, hs, sb, cudaMemcpyHostToDevice);
  cudaMemcpy(dr, hr, rb, cudaMemcpyHostToDevice);
  pccl_status_t b = pccl_reduce_scatterv(ds, inplace ? ds + at * es : dr, counts, t, op, comm);
  char algo[80];
  snprintf(algo, sizeof algo, "%s", b == PCCL_OK ? pccl_comm_last_algo(comm) : "auto");
  pccl_status_t f = pccl_comm_set_algo(g_ref, PCCL_COLL_REDUCE_SCATTERV, algo);
  if (f != PCCL_OK) f = pccl_comm_set_algo(g_ref, PCCL_COLL_REDUCE_SCATTER, algo); /* equal counts */
  pccl_status_t a = pccl_reduce_scatterv(hs, inplace ? hs + at * es : hr, counts, t, op, g_ref);
  char what[200];
  snprintf(what, sizeof what, "reduce_scatterv %s %s base %zu%s: host %s, device %s (%s)",
           pccl_dtype_name(t), pccl_op_name(op), base, inplace ? " in place" : "",
           pccl_status_string(a), pccl_status_string(b), b == PCCL_OK ? algo : pccl_last_error(comm));
  expect(f == PCCL_OK && a == PCCL_OK && b == PCCL_OK, what);
  cudaMemcpy(got, ds, sb, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hs, sb) == 0, what);
  cudaMemcpy(got, dr, rb, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hr, rb) == 0, what);
  cudaFree(ds), cudaFree(dr);
  free(hs), free(hr), free(got);
}

/* Counts of one_v's pattern (an empty block every third rank) placed
 * packed or in reverse rank order with gaps; returns the buffer's length. */
static size_t v_layout(size_t base, int placed, int salt, size_t *counts, size_t *displs) {
  size_t at = 0;
  for (int r = 0; r < g_size; r++)
    counts[r] = (r + salt) % 3 == 1 ? 0 : base * (size_t)((r + salt) % 2 + 1);
  for (int r = g_size - 1; r >= 0; r--) displs[r] = at + 2, at += 2 + counts[r];
  if (placed) return at;
  at = 0;
  for (int r = 0; r < g_size; r++) displs[r] = at, at += counts[r];
  return at;
}

/* A gatherv or scatterv on device buffers against the same on host
 * buffers; the ranks but the root pass NULL for the root's buffer and
 * arrays. */
static void one_rooted_v(int scatter, pccl_dtype_t t, size_t base, int placed, int inplace, int root,
                         pccl_comm_t *comm) {
  size_t es = pccl_dtype_size(t), counts[64], displs[64];
  int at_root = g_rank == root;
  size_t mb = (v_layout(base, placed, 0, counts, displs) + 1) * es, ob = counts[g_rank] * es + es;
  uint8_t *hm = malloc(mb), *ho = malloc(ob), *got = malloc(mb > ob ? mb : ob);
  fill(hm, mb, (unsigned)(g_rank * 13 + base)), fill(ho, ob, (unsigned)(g_rank * 5 + base));
  uint8_t *dm = dmalloc(mb), *dO = dmalloc(ob);
  cudaMemcpy(dm, hm, mb, cudaMemcpyHostToDevice), cudaMemcpy(dO, ho, ob, cudaMemcpyHostToDevice);
  inplace = inplace && at_root;
  size_t off = displs[g_rank] * es;
  const size_t *c = at_root ? counts : NULL, *d = at_root && placed ? displs : NULL;
  uint8_t *dmany = at_root ? dm : NULL, *hmany = at_root ? hm : NULL;
  uint8_t *down = inplace ? dm + off : dO, *hown = inplace ? hm + off : ho;
  size_t n = counts[g_rank];
  pccl_status_t b = scatter ? pccl_scatterv(dmany, c, d, down, n, t, root, comm)
                            : pccl_gatherv(down, n, dmany, c, d, t, root, comm);
  pccl_status_t a = scatter ? pccl_scatterv(hmany, c, d, hown, n, t, root, g_ref)
                            : pccl_gatherv(hown, n, hmany, c, d, t, root, g_ref);
  char what[200];
  snprintf(what, sizeof what, "%s %s base %zu root %d%s%s: host %s, device %s (%s)",
           scatter ? "scatterv" : "gatherv", pccl_dtype_name(t), base, root, placed ? " placed" : "",
           inplace ? " in place" : "", pccl_status_string(a), pccl_status_string(b),
           b == PCCL_OK ? pccl_comm_last_algo(comm) : pccl_last_error(comm));
  expect(a == PCCL_OK && b == PCCL_OK, what);
  cudaMemcpy(got, dm, mb, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hm, mb) == 0, what);
  cudaMemcpy(got, dO, ob, cudaMemcpyDeviceToHost);
  expect(memcmp(got, ho, ob) == 0, what);
  cudaFree(dm), cudaFree(dO);
  free(hm), free(ho), free(got);
}

/* An all-to-allv on device buffers against the same on host buffers: what
 * rank i sends rank j depends on i + j (so the counts are symmetric and the
 * call runs in place too), both sides laid out alike. */
static void one_a2av(pccl_dtype_t t, size_t base, int placed, int inplace, pccl_comm_t *comm) {
  size_t es = pccl_dtype_size(t), counts[64], displs[64];
  size_t bytes = (v_layout(base, placed, g_rank, counts, displs) + 1) * es;
  uint8_t *hs = malloc(bytes), *hr = malloc(bytes), *got = malloc(bytes);
  fill(hs, bytes, (unsigned)(g_rank * 11 + base)), fill(hr, bytes, (unsigned)(g_rank * 19 + base));
  uint8_t *ds = dmalloc(bytes), *dr = dmalloc(bytes);
  cudaMemcpy(ds, hs, bytes, cudaMemcpyHostToDevice), cudaMemcpy(dr, hr, bytes, cudaMemcpyHostToDevice);
  const size_t *d = placed ? displs : NULL;
  pccl_status_t b = pccl_alltoallv(inplace ? dr : ds, counts, d, dr, counts, d, t, comm);
  pccl_status_t a = pccl_alltoallv(inplace ? hr : hs, counts, d, hr, counts, d, t, g_ref);
  char what[200];
  snprintf(what, sizeof what, "alltoallv %s base %zu%s%s: host %s, device %s (%s)", pccl_dtype_name(t),
           base, placed ? " placed" : "", inplace ? " in place" : "", pccl_status_string(a),
           pccl_status_string(b), b == PCCL_OK ? pccl_comm_last_algo(comm) : pccl_last_error(comm));
  expect(a == PCCL_OK && b == PCCL_OK, what);
  cudaMemcpy(got, dr, bytes, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hr, bytes) == 0, what);
  cudaMemcpy(got, ds, bytes, cudaMemcpyDeviceToHost);
  expect(memcmp(got, hs, bytes) == 0, what);
  cudaFree(ds), cudaFree(dr);
  free(hs), free(hr), free(got);
}

static void refusals(pccl_comm_t *comm) {
  float *d = dmalloc(64 * sizeof(float)), h[64] = {0};
  expect(pccl_allreduce(d, h, 64, PCCL_FLOAT32, PCCL_SUM, comm) == PCCL_ERR_INVALID_ARGUMENT,
         "device sendbuf with host recvbuf is refused");
  expect(strstr(pccl_last_error(comm), "device") != NULL, "and the message says why");
  pccl_lossy_t l = PCCL_LOSSY_INIT(1e-3);
  expect(pccl_allreduce_lossy(d, d, 64, PCCL_FLOAT32, PCCL_SUM, &l, comm) == PCCL_ERR_UNSUPPORTED,
         "a compressed call on device buffers is refused");
  cudaFree(d);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    if (g_rank == 0) printf("SKIP: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none");
    MPI_Finalize();
    return 77;
  }
  cudaSetDevice(g_rank % ndev);
  pccl_comm_t *comm = NULL;
  if (pccl_comm_create_world(&comm) != PCCL_OK || pccl_comm_create_world(&g_ref) != PCCL_OK) {
    printf("rank %d: %s\n", g_rank, pccl_last_error(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const struct { pccl_dtype_t t; pccl_op_t op; } types[] = {
      {PCCL_INT32, PCCL_SUM}, {PCCL_FLOAT32, PCCL_SUM}, {PCCL_BFLOAT16, PCCL_SUM},
      {PCCL_FLOAT16, PCCL_MAX}, {PCCL_INT8, PCCL_PROD}, {PCCL_UINT64, PCCL_MIN}, {PCCL_FLOAT64, PCCL_AVG},
      {PCCL_INT16, PCCL_BXOR}, {PCCL_FLOAT_INT, PCCL_MAXLOC}};
  const size_t counts[] = {1, 7, 1000, 65537};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        one(&shapes[s], types[k].t, types[k].op, counts[c], (int)((k + c) % 2), (int)(c % (size_t)g_size), comm);
  const size_t bases[] = {1, 333, 40000};
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
    for (int placed = 0; placed < 2; placed++)
      for (int inplace = 0; inplace < 2; inplace++)
        one_v(b % 2 ? PCCL_FLOAT16 : PCCL_FLOAT32, bases[b], placed, inplace, comm);
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
    for (int inplace = 0; inplace < 2; inplace++) {
      one_rsv(PCCL_FLOAT32, PCCL_SUM, bases[b], inplace, comm);
      one_rsv(PCCL_BFLOAT16, PCCL_AVG, bases[b], inplace, comm);
      one_rsv(PCCL_INT8, PCCL_PROD, bases[b], inplace, comm);
    }
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
    for (int placed = 0; placed < 2; placed++)
      for (int inplace = 0; inplace < 2; inplace++) {
        pccl_dtype_t t = b % 2 ? PCCL_FLOAT16 : PCCL_INT32;
        int root = (int)(b + (size_t)placed) % g_size;
        one_rooted_v(0, t, bases[b], placed, inplace, root, comm);
        one_rooted_v(1, t, bases[b], placed, inplace, root, comm);
        one_a2av(t, bases[b], placed, inplace, comm);
      }
  /* device and host ranks in one call, at sizes the node segment takes and
   * sizes it does not (before, a device rank skipped the segment its host
   * peers chose, and the call hung) */
  g_mixed = 1;
  const size_t mixed_counts[] = {1, 1000, 65537};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (size_t c = 0; c < sizeof mixed_counts / sizeof mixed_counts[0]; c++)
      one(&shapes[s], c % 2 ? PCCL_INT32 : PCCL_FLOAT32, PCCL_SUM, mixed_counts[c], (int)(c % 2),
          (int)(c % (size_t)g_size), comm);
  g_mixed = 0;
  refusals(comm);
  pccl_comm_destroy(comm);
  pccl_comm_destroy(g_ref);
  int failed = g_failed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%d passed, %d failed (rank 0's checks; failures over all ranks)\n", g_passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
