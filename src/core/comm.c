/* comm.c - communicator creation and destruction, the registry of live
 * communicators (so a destroyed handle is an error, not a crash), topology
 * (nodes from MPI's shared-memory split or PCCL_RANKS_PER_NODE), and the
 * per-communicator settings. */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "config.h"
#include "pccl_mpi.h"
#include "shared_mem.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pccl_comm_t **registry;
static size_t registry_n, registry_cap;
static int mpi_initialized_by_pccl;
/* Bumped by every removal. A thread remembers the last communicator it
 * found live and the removal count then, and trusts it while no removal
 * has happened since: taking the lock cost more than a whole small
 * collective on the node segment (perf, 8-byte broadcast on 2 ranks). */
static _Atomic unsigned long registry_removals;
static _Thread_local const pccl_comm_t *live_seen;
static _Thread_local unsigned long live_seen_at;

int pccl__comm_live(const pccl_comm_t *comm) {
  int live = 0;
  if (!comm) return 0;
  if (comm == live_seen &&
      atomic_load_explicit(&registry_removals, memory_order_acquire) == live_seen_at)
    return 1;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < registry_n && !live; i++) live = registry[i] == comm;
  if (live) {
    live_seen = comm;
    live_seen_at = atomic_load_explicit(&registry_removals, memory_order_relaxed);
  }
  pthread_mutex_unlock(&registry_lock);
  return live;
}

static int registry_add(pccl_comm_t *comm) {
  int ok = 1;
  pthread_mutex_lock(&registry_lock);
  if (registry_n == registry_cap) {
    size_t cap = registry_cap ? 2 * registry_cap : 8;
    pccl_comm_t **r = realloc(registry, cap * sizeof(*r));
    if (r) {
      registry = r;
      registry_cap = cap;
    } else {
      ok = 0;
    }
  }
  if (ok) registry[registry_n++] = comm;
  pthread_mutex_unlock(&registry_lock);
  return ok;
}

static int registry_remove(pccl_comm_t *comm) {
  int found = 0;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < registry_n; i++) {
    if (registry[i] != comm) continue;
    registry[i] = registry[--registry_n];
    atomic_fetch_add_explicit(&registry_removals, 1, memory_order_release);
    found = 1;
    break;
  }
  if (registry_n == 0) {
    free(registry);
    registry = NULL;
    registry_cap = 0;
  }
  pthread_mutex_unlock(&registry_lock);
  return found;
}

static pccl_status_t mpi_failed(pccl_status_t st, const char *where, int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) strcpy(msg, "unknown MPI error");
  return pccl__error(NULL, st, where, "MPI failed: %s", msg);
}

/* Nodes from MPI: ranks sharing memory form a node; nodes are numbered in
 * the order of their lowest rank. */
static int topology_from_mpi(pccl_comm_t *c) {
  MPI_Comm local;
  int rc = MPI_Comm_split_type(c->mpi, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm_rank(local, &c->local_rank);
  MPI_Comm_size(local, &c->local_size);
  int leader = c->rank;
  rc = MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local);
  MPI_Comm_free(&local);
  if (rc != MPI_SUCCESS) return rc;
  int *leaders = malloc((size_t)c->size * sizeof(int));
  if (!leaders) return MPI_ERR_NO_MEM;
  rc = MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, c->mpi);
  if (rc == MPI_SUCCESS) {
    c->node = c->nnodes = 0;
    for (int r = 0; r < c->size; r++) {
      if (leaders[r] != r) continue; /* count each node once, at its leader */
      if (r < leader) c->node++;
      c->nnodes++;
    }
  }
  free(leaders);
  return rc;
}

static void topology_fixed(pccl_comm_t *c, int per_node) {
  c->node = c->rank / per_node;
  c->local_rank = c->rank % per_node;
  c->nnodes = (c->size + per_node - 1) / per_node;
  int left = c->size - c->node * per_node;
  c->local_size = left < per_node ? left : per_node;
}

/* Every rank's node and index in it, for the hierarchical generators, and a
 * check that the ranks agree on what shapes their schedules (a rank that
 * built different steps would wait forever for messages nobody sends) and
 * their shared memory (PCCL_SEG and PCCL_SHM decide who joins its
 * collective set-up; ranks that sized the node segment differently would
 * lay it out differently). All ranks see the same gathered data, so all
 * reach the same verdict. */
#define TOPO_INTS 5
static pccl_status_t gather_topology(pccl_comm_t *c, int use_shm, int use_seg, const char *where) {
  int mine[TOPO_INTS] = {c->node, c->local_rank, (int)c->intra, use_shm | use_seg << 1,
                         (int)c->seg_bytes /* at most PCCL_SEG_BYTES_MAX, 1 GiB */};
  int *all = malloc(TOPO_INTS * (size_t)c->size * sizeof(int));
  int *node = malloc(2 * (size_t)c->size * sizeof(int)), *local = node ? node + c->size : NULL;
  int ok = all && node, rc = MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->mpi);
  if (rc == MPI_SUCCESS && ok)
    rc = MPI_Allgather(mine, TOPO_INTS, MPI_INT, all, TOPO_INTS, MPI_INT, c->mpi);
  pccl_status_t st = PCCL_OK;
  if (rc != MPI_SUCCESS)
    st = mpi_failed(PCCL_ERR_MPI, where, rc);
  else if (!ok)
    st = pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory gathering the node layout");
  for (int r = 0; st == PCCL_OK && r < c->size; r++) {
    const int *theirs = all + TOPO_INTS * (size_t)r;
    node[r] = theirs[0];
    local[r] = theirs[1];
    const char *differs = theirs[2] != mine[2] ? "PCCL_HIER_INTRA"
                          : theirs[3] != mine[3] ? "PCCL_SEG or PCCL_SHM"
                          : theirs[4] != mine[4] ? "PCCL_SEG_BYTES" : NULL;
    if (differs)
      st = pccl__error(NULL, PCCL_ERR_CONFIG, where,
                       "ranks disagree on %s (rank %d has another value than rank %d)", differs, r,
                       c->rank);
  }
  if (st == PCCL_OK && pccl_topo_create(c->size, node, local, &c->topo) != PCCL_OK)
    st = pccl__error(NULL, PCCL_ERR_CONFIG, where,
                     "ranks disagree on the node layout (is PCCL_RANKS_PER_NODE the same on "
                     "every rank?)");
  free(all);
  free(node);
  return st;
}

/* Reads PCCL_ALGO, PCCL_RANKS_PER_NODE (0 in *per_node when unset),
 * PCCL_SHM (1 when unset), PCCL_HIER_INTRA (ring when unset), PCCL_TIMEOUT,
 * PCCL_CHECK and PCCL_MAX_SCRATCH, and checks PCCL_CUDA's form (the CUDA
 * layer reads it once per process, src/cuda/runtime.cu; builds without
 * CUDA check it too, so a typo is never silent). An empty variable counts as unset, as shells and
 * CTest clear them that way. */
static pccl_status_t read_environment(pccl_comm_t *c, long *per_node, long *use_shm,
                                      long *use_seg) {
  char err[PCCL_ERROR_LEN];
  const char *where = "pccl_comm_create";
  *per_node = 0;
  *use_shm = 1;
  *use_seg = 1;
  const char *seg = getenv("PCCL_SEG");
  if (seg && seg[0]) {
    pccl_status_t st = pccl__parse_int("PCCL_SEG", seg, 0, 1, use_seg, err, sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  long long seg_bytes = (long long)PCCL_SEG_BYTES_DEFAULT;
  const char *seg_bytes_env = getenv("PCCL_SEG_BYTES");
  if (seg_bytes_env && seg_bytes_env[0]) {
    pccl_status_t st = pccl__parse_bytes("PCCL_SEG_BYTES", seg_bytes_env,
                                         (long long)PCCL_SEG_BYTES_MAX, &seg_bytes, err, sizeof(err));
    if (st == PCCL_OK && seg_bytes < (long long)PCCL_SEG_BYTES_MIN) {
      snprintf(err, sizeof err, "PCCL_SEG_BYTES=\"%s\" is below the least, %zu bytes",
               seg_bytes_env, PCCL_SEG_BYTES_MIN);
      st = PCCL_ERR_CONFIG;
    }
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  c->seg_bytes = (size_t)seg_bytes;
  const char *intra = getenv("PCCL_HIER_INTRA");
  c->intra = PCCL_INTRA_RING;
  if (intra && intra[0]) {
    if (strcmp(intra, "recursive") == 0)
      c->intra = PCCL_INTRA_RECURSIVE;
    else if (strcmp(intra, "ring") != 0)
      return pccl__error(NULL, PCCL_ERR_CONFIG, where,
                         "PCCL_HIER_INTRA is '%s'; expected ring or recursive", intra);
  }
  const char *cuda = getenv("PCCL_CUDA");
  if (cuda && cuda[0] && strcmp(cuda, "0") && strcmp(cuda, "1") && strcmp(cuda, "off") &&
      strcmp(cuda, "on") && strcmp(cuda, "auto"))
    return pccl__error(NULL, PCCL_ERR_CONFIG, where,
                       "PCCL_CUDA is '%s'; expected 0, 1, off, on or auto", cuda);
  const char *shm = getenv("PCCL_SHM");
  if (shm && shm[0]) {
    pccl_status_t st = pccl__parse_int("PCCL_SHM", shm, 0, 1, use_shm, err, sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  const char *algo = getenv("PCCL_ALGO");
  if (algo && algo[0]) {
    pccl_status_t st = pccl__parse_algo_list(algo, c->forced, &c->excluded, err, sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  c->timeout = PCCL_TIMEOUT_DEFAULT;
  const char *timeout = getenv("PCCL_TIMEOUT");
  if (timeout && timeout[0]) {
    pccl_status_t st = pccl__parse_seconds("PCCL_TIMEOUT", timeout, PCCL_TIMEOUT_MAX, &c->timeout,
                                           err, sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  long check = PCCL_CHECK_DEFAULT;
  const char *check_env = getenv("PCCL_CHECK");
  if (check_env && check_env[0]) {
    pccl_status_t st = pccl__parse_int("PCCL_CHECK", check_env, 0, 1, &check, err, sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  c->check = (int)check;
  long long scratch = PCCL_MAX_SCRATCH_DEFAULT;
  const char *scratch_env = getenv("PCCL_MAX_SCRATCH");
  if (scratch_env && scratch_env[0]) {
    pccl_status_t st = pccl__parse_bytes("PCCL_MAX_SCRATCH", scratch_env, PCCL_MAX_SCRATCH_MAX,
                                         &scratch, err, sizeof(err));
    if (st == PCCL_OK && scratch < PCCL_MAX_SCRATCH_MIN) {
      snprintf(err, sizeof err, "PCCL_MAX_SCRATCH=\"%s\" is below the least, %d bytes", scratch_env,
               PCCL_MAX_SCRATCH_MIN);
      st = PCCL_ERR_CONFIG;
    }
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  c->scratch_limit = (size_t)scratch;
  const char *rpn = getenv("PCCL_RANKS_PER_NODE");
  if (rpn && rpn[0]) {
    pccl_status_t st = pccl__parse_int("PCCL_RANKS_PER_NODE", rpn, 1, 1L << 30, per_node, err,
                                       sizeof(err));
    if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  }
  return PCCL_OK;
}

/* Collective: the tuning table (PCCL_TUNING_FILE, else the built-in one) and
 * its section for this layout, used across nodes only; every rank must load
 * a table and pick the same rows, or none proceeds. */
static pccl_status_t setup_tuning(pccl_comm_t *c, const char *where) {
  char err[PCCL_ERROR_LEN] = "";
  const char *path = getenv("PCCL_TUNING_FILE");
  pccl_status_t st = path && path[0] ? pccl_tune_load(path, &c->tune, err, sizeof err)
                                     : pccl_tune_parse(pccl_tune_builtin, &c->tune, err, sizeof err);
  int widest = 0;
  for (int n = 0; n < c->topo.nnodes; n++)
    if (c->topo.node_off[n + 1] - c->topo.node_off[n] > widest)
      widest = c->topo.node_off[n + 1] - c->topo.node_off[n];
  if (st == PCCL_OK && c->nnodes > 1) c->tune_sec = pccl_tune_section(&c->tune, c->size, widest);
  uint32_t h = pccl_tune_hash(&c->tune, c->tune_sec);
  unsigned v[3] = {st == PCCL_OK, h, ~h};
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UNSIGNED, MPI_MIN, c->mpi);
  if (rc != MPI_SUCCESS) st = mpi_failed(PCCL_ERR_MPI, where, rc);
  else if (st != PCCL_OK) st = pccl__error(NULL, st, where, "%s", err);
  else if (!v[0]) st = pccl__error(NULL, PCCL_ERR_CONFIG, where, "another rank could not load its tuning table (PCCL_TUNING_FILE)");
  else if (v[1] != ~v[2])
    st = pccl__error(NULL, PCCL_ERR_CONFIG, where,
                     "ranks disagree on the tuning table (is PCCL_TUNING_FILE the same file on every rank?)");
  if (st != PCCL_OK) pccl_tune_free(&c->tune);
  return st;
}

/* Collective: ranks of one node (logical node, as PCCL_RANKS_PER_NODE may
 * split a machine) reach each other through shm when it works. */
static pccl_status_t setup_transports(pccl_comm_t *c, int use_shm, int use_seg) {
  c->route = (pccl_route_t){&c->tp, NULL, PCCL_ROUTE_SHM_MIN};
  c->route_nb = (pccl_route_t){&c->tp, NULL, 0};
  /* the segment serves communicators inside one node (all ranks agree on nnodes) */
  if (!use_seg || !use_shm || c->nnodes > 1 || c->size == 1) {
    snprintf(c->seg_why, sizeof c->seg_why, "%s",
             !use_shm ? "PCCL_SHM=0" : !use_seg ? "PCCL_SEG=0"
             : c->size == 1 ? "one rank" : "the communicator spans several nodes");
  } else {
    pccl_status_t st = pccl_seg_create(c->mpi, c->node, c->seg_bytes, &c->seg, c->seg_why,
                                       sizeof c->seg_why);
    if (st != PCCL_OK && st != PCCL_ERR_UNSUPPORTED) return st;
  }
  if (!use_shm) {
    snprintf(c->transport, sizeof c->transport, "mpi (PCCL_SHM=0)");
    return PCCL_OK;
  }
  char why[128] = "";
  pccl_status_t st = pccl_shm_tp_create(c->mpi, c->node, &c->shm, why, sizeof why);
  if (st == PCCL_ERR_UNSUPPORTED) {
    snprintf(c->transport, sizeof c->transport, "mpi (shm unavailable: %s)", why);
    return PCCL_OK;
  }
  if (st != PCCL_OK) {
    pccl_seg_destroy(c->seg, 1);
    c->seg = NULL;
    return st;
  }
  c->route.shm = c->route_nb.shm = c->shm;
  /* a logical node (PCCL_RANKS_PER_NODE) may span machines: ask per peer */
  c->shm_all = 1;
  for (int p = 0; p < c->size; p++)
    if (p != c->rank && !pccl_shm_tp_serves(c->shm, p)) c->shm_all = 0;
  snprintf(c->transport, sizeof c->transport, "%sshm in node (memcpy from peers' pccl_mem_alloc buffers, else cross-memory attach), mpi between nodes",
           c->seg ? "node segment, " : "");
  return PCCL_OK;
}

pccl_status_t pccl_comm_create_mpi(MPI_Comm mpi_comm, pccl_comm_t **out) {
  const char *where = "pccl_comm_create";
  int inited = 0, finalized = 0, inter = 0;
  if (!out) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "comm is NULL");
  *out = NULL;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "MPI is not initialised");
  if (mpi_comm == MPI_COMM_NULL)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "the MPI communicator is MPI_COMM_NULL");
  if (MPI_Comm_test_inter(mpi_comm, &inter) != MPI_SUCCESS || inter)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "the MPI communicator is an inter-communicator");
  pccl_comm_t *c = calloc(1, sizeof(*c));
  long per_node, use_shm, use_seg;
  pccl_status_t st = c ? read_environment(c, &per_node, &use_shm, &use_seg)
                       : pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  /* The rest is collective: a rank that stops here alone (a malformed
   * PCCL_* variable in its own environment) would leave its peers waiting
   * in it, so they learn of it and fail too. */
  int worst = (int)st, rc = MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, mpi_comm);
  if (st == PCCL_OK && rc != MPI_SUCCESS) st = mpi_failed(PCCL_ERR_MPI, where, rc);
  if (st == PCCL_OK && worst != PCCL_OK)
    st = pccl__error(NULL, (pccl_status_t)worst, where,
                     "another rank could not create the communicator (%s; its own error says why)",
                     pccl_status_string((pccl_status_t)worst));
  if (st != PCCL_OK) {
    free(c);
    return st;
  }
  rc = MPI_Comm_dup(mpi_comm, &c->mpi);
  if (rc != MPI_SUCCESS) {
    free(c);
    return mpi_failed(PCCL_ERR_MPI, where, rc);
  }
  MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->mpi, &c->rank);
  MPI_Comm_size(c->mpi, &c->size);
  c->tp.comm = c->mpi;
  snprintf(c->last_algo, sizeof(c->last_algo), "none");
  if (per_node > 0)
    topology_fixed(c, (int)per_node);
  else
    rc = topology_from_mpi(c);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&c->mpi);
    free(c);
    return mpi_failed(PCCL_ERR_MPI, where, rc);
  }
  if ((st = gather_topology(c, (int)use_shm, (int)use_seg, where)) != PCCL_OK) {
    MPI_Comm_free(&c->mpi);
    free(c);
    return st;
  }
  if ((st = setup_tuning(c, where)) != PCCL_OK) {
    pccl_topo_free(&c->topo);
    MPI_Comm_free(&c->mpi);
    free(c);
    return st;
  }
  if ((st = setup_transports(c, (int)use_shm, (int)use_seg)) != PCCL_OK) {
    pccl_tune_free(&c->tune);
    pccl_topo_free(&c->topo);
    MPI_Comm_free(&c->mpi);
    free(c);
    return pccl__error(NULL, st, where, "setting up the shared-memory transport failed: %s",
                       pccl_status_string(st));
  }
  int threads = MPI_THREAD_SINGLE;
  MPI_Query_thread(&threads);
  c->mpi_threads = threads == MPI_THREAD_MULTIPLE;
  if (!registry_add(c)) {
    pccl_tune_free(&c->tune);
    pccl_topo_free(&c->topo);
    pccl_shm_tp_destroy(c->shm, 0, c->timeout); /* the peers go on with it */
    pccl_seg_destroy(c->seg, 1);
    MPI_Comm_free(&c->mpi);
    free(c);
    return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  }
  *out = c;
  return PCCL_OK;
}

pccl_status_t pccl_comm_create_world(pccl_comm_t **out) {
  int inited = 0;
  if (!out)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_comm_create_world", "comm is NULL");
  MPI_Initialized(&inited);
  if (!inited) {
    int provided;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) return mpi_failed(PCCL_ERR_MPI, "pccl_comm_create_world", rc);
    mpi_initialized_by_pccl = 1;
  }
  return pccl_comm_create_mpi(MPI_COMM_WORLD, out);
}

/* MPI_Comm_create_group's tag: one creation at a time per parent, as the
 * parent is used by one thread at a time. */
enum { PCCL_GROUP_TAG = 0x70cc };

/* Members named twice, out of range, or a caller missing from its own list
 * would make MPI_Comm_create_group undefined; refuse them here. */
static pccl_status_t check_group(const pccl_comm_t *parent, int nranks, const int *ranks,
                                 const char *where) {
  if (!ranks) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "ranks is NULL");
  if (nranks < 1 || nranks > parent->size)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "nranks %d is not in [1, %d]", nranks, parent->size);
  unsigned char *seen = calloc((size_t)parent->size, 1);
  if (!seen) return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  pccl_status_t st = PCCL_OK;
  int self = 0;
  for (int i = 0; i < nranks && st == PCCL_OK; i++) {
    if (ranks[i] < 0 || ranks[i] >= parent->size)
      st = pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "ranks[%d] = %d is not a rank of the parent (size %d)", i, ranks[i],
                       parent->size);
    else if (seen[ranks[i]]++)
      st = pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "rank %d is listed twice",
                       ranks[i]);
    else
      self |= ranks[i] == parent->rank;
  }
  free(seen);
  if (st == PCCL_OK && !self)
    st = pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                     "the calling rank %d is not in ranks", parent->rank);
  return st;
}

/* Members that passed different lists may still have formed a communicator
 * (the same set in another order): compare a digest of the list. */
static pccl_status_t agree_on_group(MPI_Comm sub, int nranks, const int *ranks,
                                    const char *where) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < nranks; i++) h = (h ^ (uint64_t)(uint32_t)ranks[i]) * 1099511628211ull;
  uint64_t lo_hi[2] = {h, ~h}, red[2];
  int rc = MPI_Allreduce(lo_hi, red, 2, MPI_UINT64_T, MPI_MIN, sub);
  if (rc != MPI_SUCCESS) return mpi_failed(PCCL_ERR_MPI, where, rc);
  if (red[0] != h || red[1] != ~h)
    return pccl__error(NULL, PCCL_ERR_MISMATCH, where,
                       "the members passed different rank lists (this rank's: %d ranks)",
                       nranks);
  return PCCL_OK;
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The MPI group is built from the sorted list, so that members who list the
 * same ranks in different orders still form it (MPI leaves differing groups
 * undefined) and can be told so; the list's order is then applied by a split. */
pccl_status_t pccl_comm_create_group(pccl_comm_t *parent, int nranks, const int *ranks,
                                     pccl_comm_t **out) {
  const char *where = "pccl_comm_create_group";
  if (!out) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "comm is NULL");
  *out = NULL;
  if (!pccl__comm_live(parent))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, where, "parent is not a live communicator");
  pccl_status_t st = check_group(parent, nranks, ranks, where);
  if (st != PCCL_OK) return st;
  int *sorted = malloc((size_t)nranks * sizeof(int)), key = 0;
  if (!sorted) return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  memcpy(sorted, ranks, (size_t)nranks * sizeof(int));
  qsort(sorted, (size_t)nranks, sizeof(int), compare_ints);
  while (ranks[key] != parent->rank) key++;
  MPI_Group all, part;
  MPI_Comm sub = MPI_COMM_NULL, ordered = MPI_COMM_NULL;
  int rc = MPI_Comm_group(parent->mpi, &all);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Group_incl(all, nranks, sorted, &part);
    MPI_Group_free(&all);
  }
  free(sorted);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_create_group(parent->mpi, part, PCCL_GROUP_TAG, &sub);
    MPI_Group_free(&part);
  }
  if (rc != MPI_SUCCESS) return mpi_failed(PCCL_ERR_MPI, where, rc);
  st = agree_on_group(sub, nranks, ranks, where);
  if (st == PCCL_OK && (rc = MPI_Comm_split(sub, 0, key, &ordered)) != MPI_SUCCESS)
    st = mpi_failed(PCCL_ERR_MPI, where, rc);
  MPI_Comm_free(&sub);
  if (st == PCCL_OK) {
    st = pccl_comm_create_mpi(ordered, out);
    MPI_Comm_free(&ordered);
  }
  return st;
}

pccl_status_t pccl_finalize(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (mpi_initialized_by_pccl && !finalized) {
    mpi_initialized_by_pccl = 0;
    if (MPI_Finalize() != MPI_SUCCESS)
      return pccl__error(NULL, PCCL_ERR_MPI, "pccl_finalize", "MPI_Finalize failed");
  }
  return PCCL_OK;
}

void pccl__comm_free_tmp(pccl_comm_t *comm) {
  if (comm->tmp_shared)
    pccl__shmem_free(comm->tmp);
  else
    free(comm->tmp);
  comm->tmp = NULL;
  comm->tmp_bytes = 0;
  comm->tmp_shared = 0;
}

pccl_status_t pccl_comm_destroy(pccl_comm_t *comm) {
  if (!comm) return PCCL_OK;
  if (pccl__comm_live(comm) && comm->nb_close && comm->nb_close(comm) != PCCL_OK)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, "pccl_comm_destroy",
                       "non-blocking calls on it are still outstanding: pccl_wait for them first");
  if (!registry_remove(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, "pccl_comm_destroy",
                       "not a live communicator (NULL, never created or already destroyed)");
  pccl_cache_clear(&comm->cache);
  pccl_mpi_tp_fini(&comm->tp);
  /* Freeing the node's shared window waits for every peer of the node; on
   * a broken communicator some may never come, so the window is left
   * (shm_transport.h says how the node's ranks agree on it). */
  pccl_shm_tp_destroy(comm->shm, comm->broken == PCCL_OK && !comm->abort_flag, comm->timeout);
  pccl_seg_destroy(comm->seg, comm->broken == PCCL_OK && !comm->abort_flag);
  pccl_exec_ws_free(&comm->exec_ws);
  pccl__comm_free_tmp(comm);
  if (comm->device_free) comm->device_free(comm);
  pccl_topo_free(&comm->topo);
  pccl_tune_free(&comm->tune);
  free(comm->sel);
  pccl__memo_free(comm);
  free(comm->vblocks);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm->mpi);
  free(comm);
  return PCCL_OK;
}

pccl_status_t pccl_comm_set_timeout(pccl_comm_t *comm, double seconds) {
  const char *where = "pccl_comm_set_timeout";
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, where, "not a live communicator");
  if (!(seconds >= 0 && seconds <= PCCL_TIMEOUT_MAX))
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, where,
                       "%g is not a number of seconds in [0, %g]", seconds, PCCL_TIMEOUT_MAX);
  comm->timeout = seconds;
  return PCCL_OK;
}

pccl_status_t pccl_comm_abort(pccl_comm_t *comm) {
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, "pccl_comm_abort", "not a live communicator");
  atomic_store(&comm->abort_flag, 1);
  return PCCL_OK;
}

/* Getters share their checks. */
static pccl_status_t get_int(const pccl_comm_t *comm, int *out, const char *where, size_t field) {
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, where, "not a live communicator");
  if (!out) return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, where, "output pointer is NULL");
  memcpy(out, (const char *)comm + field, sizeof(int));
  return PCCL_OK;
}

#define PCCL_GETTER(fn, field) \
  pccl_status_t fn(const pccl_comm_t *comm, int *out) { \
    return get_int(comm, out, #fn, offsetof(pccl_comm_t, field)); \
  }
PCCL_GETTER(pccl_comm_rank, rank)
PCCL_GETTER(pccl_comm_size, size)
PCCL_GETTER(pccl_comm_node, node)
PCCL_GETTER(pccl_comm_nnodes, nnodes)
PCCL_GETTER(pccl_comm_local_rank, local_rank)
PCCL_GETTER(pccl_comm_local_size, local_size)

pccl_status_t pccl_comm_set_algo(pccl_comm_t *comm, pccl_coll_t coll, const char *name) {
  const char *where = "pccl_comm_set_algo";
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, where, "not a live communicator");
  if ((unsigned)coll >= PCCL_COLL_COUNT)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, where, "unknown collective %d", (int)coll);
  comm->config_gen++;
  if (!name || strcmp(name, "auto") == 0) {
    comm->forced[coll] = (pccl_choice_t){NULL, 0};
    return PCCL_OK;
  }
  char why[160];
  pccl_choice_t choice;
  if (pccl_choice_parse(coll, name, &choice, why, sizeof(why)) != PCCL_OK)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, where, "%s", why);
  comm->forced[coll] = choice;
  return PCCL_OK;
}

const char *pccl_comm_transport(const pccl_comm_t *comm) {
  return pccl__comm_live(comm) ? comm->transport : "none";
}

const char *pccl_comm_last_algo(const pccl_comm_t *comm) {
  return pccl__comm_live(comm) ? comm->last_algo : "none";
}

pccl_status_t pccl_algo_list(pccl_coll_t coll, const char **names, int max, int *count) {
  const char *where = "pccl_algo_list";
  if ((unsigned)coll >= PCCL_COLL_COUNT)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "unknown collective %d", (int)coll);
  if (!count || (max > 0 && !names))
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "NULL output");
  int n = 0;
  for (int i = 0; i < PCCL_ALGO_COUNT; i++) {
    if (pccl_algos[i].coll != coll) continue;
    if (n < max) names[n] = pccl_algos[i].name;
    n++;
  }
  *count = n;
  return PCCL_OK;
}
