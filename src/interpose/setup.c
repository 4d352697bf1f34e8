/* setup.c - the interposer's state: its environment (PCCL_MPI,
 * PCCL_MPI_STATS), the pccl communicator behind each MPI communicator, the
 * way each call takes, and errors reported through MPI's error handlers.
 *
 * A pccl communicator hangs on its MPI communicator as an attribute, made in
 * MPI_Init for MPI_COMM_WORLD, else by the first blocking collective pccl
 * runs there, and destroyed by the attribute's delete
 * callback when the program frees the communicator. MPI_Finalize deletes
 * MPI_COMM_SELF's attributes first, while MPI still works; one of ours there
 * destroys what is left and prints the stats. That hook sees C, Fortran and
 * Python programs alike, which an MPI_Finalize wrapper would not (Open MPI's
 * Fortran MPI_FINALIZE calls PMPI_Finalize). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

/* One MPI communicator pccl has looked at: its pccl twin, or why it has none. */
typedef struct entry {
  MPI_Comm user;
  pccl_comm_t *pc; /* NULL for an inter-communicator */
  int rank, size;
  int holds;       /* non-blocking calls not yet finished (under `lock`) */
  int freed;       /* the program freed the communicator while some were */
  struct entry *prev, *next;
} entry_t;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int enabled = 1;
static int stats_mode; /* 0 none, 1 world rank 0, 2 every rank */
/* PCCL_MPI_NB_MIN: the smallest non-blocking call pccl takes. Below 2 MiB
 * Open MPI's own MPI_Iallreduce, overlapping computation, beat pccl's on 4
 * ranks here (docs/results/nonblocking/dropin-*.csv). */
static unsigned long long nb_min = 2ull << 20;
static char env_error[200];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int hooks_ready; /* keyval and finalize hook made */
static atomic_int finalizing;
static int keyval = MPI_KEYVAL_INVALID, self_keyval = MPI_KEYVAL_INVALID;
static entry_t *entries; /* every live entry, oldest first */
static entry_t *entries_tail;

/* Depth of pccl calls on this thread: the MPI calls pccl makes itself go
 * straight to PMPI. */
/* The drop-in is preloaded or linked, so its thread-local variable can
 * live in the static TLS block: no __tls_get_addr call on every MPI call. */
static _Thread_local int depth __attribute__((tls_model("initial-exec")));
/* The thread's way in and out of pccl: the outermost pass the gate of
 * the progress thread (progress.c). */
static void enter_pccl(void) {
  if (depth++ == 0) pccl_ip_gate_enter();
}
static void leave_pccl(void) {
  if (--depth == 0) pccl_ip_gate_leave();
}

/* The last communicator this thread looked up, good while no entry has
 * been deleted since (`deletes`, which every deletion bumps): the attribute
 * lookup cost 146 of the ~1,900 instructions of a preloaded 8-byte
 * MPI_Scan (callgrind). */
static atomic_uint deletes;
static _Thread_local struct {
  MPI_Comm comm;
  entry_t *e;
  unsigned gen;
  int valid;
} last __attribute__((tls_model("initial-exec")));

/* The counts are kept only where they will be printed: an atomic add on
 * every call cost 25 of a preloaded 8-byte MPI_Reduce's 175 ns (perf). */
static void count(pccl_ip_call_id_t id, pccl_ip_reason_t reason) {
  if (stats_mode) pccl_ip_count(id, reason);
}

/* ---- environment ---- */

static void read_env(void) {
  const char *v = getenv("PCCL_MPI");
  if (v && *v) {
    if (!strcmp(v, "off") || !strcmp(v, "0")) enabled = 0;
    else if (strcmp(v, "on") && strcmp(v, "1"))
      snprintf(env_error, sizeof env_error, "PCCL_MPI=\"%.40s\" is not on, off, 1 or 0", v);
  }
  v = getenv("PCCL_MPI_NB_MIN");
  if (v && *v) {
    char *end;
    unsigned long long n = strtoull(v, &end, 10), unit = 1;
    if (*end == 'K') unit = 1ull << 10, end++;
    else if (*end == 'M') unit = 1ull << 20, end++;
    else if (*end == 'G') unit = 1ull << 30, end++;
    if (end == v || *v < '0' || *v > '9' || *end || n > (1ull << 50) / unit) {
      if (!env_error[0])
        snprintf(env_error, sizeof env_error,
                 "PCCL_MPI_NB_MIN=\"%.40s\" is not a number of bytes (as 0, 4096, 64K, 2M)", v);
    } else {
      nb_min = n * unit;
    }
  }
  v = getenv("PCCL_MPI_PROGRESS");
  if (v && *v) {
    char *end = (char *)v;
    long us = 0;
    if (!strcmp(v, "off")) end += 3;
    else if (*v >= '0' && *v <= '9') us = strtol(v, &end, 10);
    if (end == v || *end || us > 10000000) {
      if (!env_error[0])
        snprintf(env_error, sizeof env_error,
                 "PCCL_MPI_PROGRESS=\"%.40s\" is not off or microseconds from 0 to 10000000", v);
    } else {
      pccl_ip_progress_us = us;
    }
  }
  v = getenv("PCCL_MPI_STATS");
  if (v && *v) {
    if (!strcmp(v, "1")) stats_mode = 1;
    else if (!strcmp(v, "all")) stats_mode = 2;
    else if (strcmp(v, "0") && !env_error[0])
      snprintf(env_error, sizeof env_error, "PCCL_MPI_STATS=\"%.40s\" is not 0, 1 or all", v);
  }
}

/* ---- errors ---- */

/* The MPI error class of a pccl status. */
static int error_class(pccl_status_t st) {
  switch (st) {
    case PCCL_ERR_INVALID_ARGUMENT: return MPI_ERR_ARG;
    case PCCL_ERR_INVALID_DTYPE: return MPI_ERR_TYPE;
    case PCCL_ERR_INVALID_OP: return MPI_ERR_OP;
    case PCCL_ERR_OVERFLOW: return MPI_ERR_COUNT;
    case PCCL_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case PCCL_ERR_INVALID_COMM: return MPI_ERR_COMM;
    case PCCL_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case PCCL_ERR_INTERNAL: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;
  }
}

/* Whether MPI_Error_string(code) now gives `text`. MPICH 4.0 makes codes
 * for predefined classes whose string it cannot give back. */
static int string_sticks(int code, const char *text) {
  char got[MPI_MAX_ERROR_STRING];
  int len = 0;
  return PMPI_Error_string(code, got, &len) == MPI_SUCCESS && strcmp(got, text) == 0;
}

/* An error code of class `cls` whose string is `msg`: one code per class,
 * made once, its string replaced on each error (as MPI allows), so that
 * MPI_Error_class gives the usual class and MPI_Error_string pccl's words.
 * Where this MPI cannot attach a string to such a code, the class itself is
 * the code and the message goes to stderr instead. */
static int error_code(int cls, const char *msg) {
  static struct { int cls, code; } codes[16];
  static int ncodes;
  int code = cls;
  char text[MPI_MAX_ERROR_STRING];
  snprintf(text, sizeof text, "pccl: %s", msg);
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < ncodes && codes[i].cls != cls) i++;
  if (i == ncodes && ncodes < 16 && PMPI_Add_error_code(cls, &codes[i].code) == MPI_SUCCESS)
    codes[ncodes++].cls = cls;
  if (i < ncodes && PMPI_Add_error_string(codes[i].code, text) == MPI_SUCCESS &&
      string_sticks(codes[i].code, text))
    code = codes[i].code;
  pthread_mutex_unlock(&lock);
  if (code == cls) fprintf(stderr, "%s\n", text);
  return code;
}

int pccl_ip_raise(MPI_Comm comm, int cls, const char *msg) {
  int code = error_code(cls, msg);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

/* ---- communicators ---- */

static void entry_unlink(entry_t *e) {
  if (e->prev) e->prev->next = e->next;
  else entries = e->next;
  if (e->next) e->next->prev = e->prev;
  else entries_tail = e->prev;
  e->prev = e->next = NULL;
}

static int destroy(entry_t *e) {
  enter_pccl();
  pccl_status_t st = pccl_comm_destroy(e->pc);
  leave_pccl();
  free(e);
  return st == PCCL_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
}

/* MPI lets a program free a communicator whose non-blocking calls have not
 * completed; its pccl twin then lives on until the last one finishes. */
static int on_comm_delete(MPI_Comm comm, int kv, void *value, void *extra) {
  (void)comm, (void)kv, (void)extra;
  entry_t *e = value;
  atomic_fetch_add_explicit(&deletes, 1, memory_order_release);
  pthread_mutex_lock(&lock);
  entry_unlink(e);
  int later = e->freed = e->holds > 0;
  pthread_mutex_unlock(&lock);
  return later ? MPI_SUCCESS : destroy(e);
}

void pccl_ip_unhold(void *entry) {
  entry_t *e = entry;
  pthread_mutex_lock(&lock);
  int gone = --e->holds == 0 && e->freed;
  pthread_mutex_unlock(&lock);
  if (gone) destroy(e);
}

/* MPI_Finalize: destroys every pccl communicator still alive (in the order
 * they were made, the same on every rank), then prints the stats. */
static int on_finalize(MPI_Comm comm, int kv, void *value, void *extra) {
  (void)comm, (void)kv, (void)value, (void)extra;
  atomic_store(&finalizing, 1);
  pccl_ip_progress_stop(); /* the program's requests have completed: MPI requires it */
  for (;;) {
    pthread_mutex_lock(&lock);
    entry_t *e = entries;
    pthread_mutex_unlock(&lock);
    if (!e) break;
    if (PMPI_Comm_delete_attr(e->user, keyval) != MPI_SUCCESS) {
      pthread_mutex_lock(&lock); /* the callback did not run: forget it */
      if (entries == e) entry_unlink(e);
      pthread_mutex_unlock(&lock);
    }
  }
  PMPI_Comm_free_keyval(&keyval);
  pccl_set_wait_hook(NULL, NULL); /* MPI is going */
  if (stats_mode) {
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (stats_mode == 2 || rank == 0) pccl_ip_stats_print(rank, size);
  }
  return MPI_SUCCESS;
}

/* pccl's blocking collectives wait without a call into MPI (on the node
 * segment, through shm), while the program's non-blocking calls left to
 * MPI, which a peer may be waiting on, move only inside MPI calls: as
 * MPI's own collectives' waits do, such a wait lets MPI move them now and
 * then (pccl_set_wait_hook). Only on a thread inside the program's MPI
 * call, which may call MPI at any thread level: pccl's own API, used
 * directly (its engine's thread), is not the program's MPI call. */
static void let_mpi_move(void *arg) {
  (void)arg;
  int flag = 0;
  if (depth > 0) PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
}

/* Makes the keyval and the finalize hook once MPI is up; 0 while MPI is not
 * initialised, or once it is finalising. */
static int hooks(void) {
  pthread_once(&env_once, read_env);
  if (atomic_load_explicit(&hooks_ready, memory_order_acquire))
    return !atomic_load(&finalizing);
  int ok = 0, up = 0, down = 1;
  pthread_mutex_lock(&lock);
  if (atomic_load(&hooks_ready)) ok = !atomic_load(&finalizing);
  else if (PMPI_Initialized(&up) == MPI_SUCCESS && up && PMPI_Finalized(&down) == MPI_SUCCESS &&
           !down &&
           PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_comm_delete, &keyval, NULL) ==
               MPI_SUCCESS &&
           PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &self_keyval, NULL) ==
               MPI_SUCCESS &&
           PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL) == MPI_SUCCESS) {
    int threads = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&threads);
    if (threads == MPI_THREAD_MULTIPLE) pccl_ip_gate_count_all();
    pccl_set_wait_hook(let_mpi_move, NULL);
    atomic_store_explicit(&hooks_ready, 1, memory_order_release);
    ok = 1;
  }
  pthread_mutex_unlock(&lock);
  return ok;
}

/* Makes the pccl communicator of `comm` and attaches it (collective: every
 * rank of comm comes here at once): 1 with *out set, else 0 with the MPI
 * error class in *cls and the reason in *why (an inter-communicator is
 * attached with no pccl communicator). */
static int attach(MPI_Comm comm, entry_t **out, int *cls, const char **why) {
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) {
    *cls = MPI_ERR_COMM, *why = NULL;
    return 0;
  }
  entry_t *e = calloc(1, sizeof *e);
  if (!e) {
    *cls = MPI_ERR_NO_MEM, *why = "out of memory attaching a communicator";
    return 0;
  }
  e->user = comm;
  if (!inter) {
    enter_pccl();
    pccl_status_t st = pccl_comm_create_mpi(comm, &e->pc);
    if (st == PCCL_OK) pccl_comm_rank(e->pc, &e->rank), pccl_comm_size(e->pc, &e->size);
    leave_pccl();
    if (st != PCCL_OK) {
      free(e);
      *cls = error_class(st), *why = pccl_last_error(NULL);
      return 0;
    }
  }
  if (PMPI_Comm_set_attr(comm, keyval, e) != MPI_SUCCESS) {
    enter_pccl();
    pccl_comm_destroy(e->pc);
    leave_pccl();
    free(e);
    *cls = MPI_ERR_INTERN, *why = "cannot attach to the communicator";
    return 0;
  }
  pthread_mutex_lock(&lock);
  e->prev = entries_tail;
  if (entries_tail) entries_tail->next = e;
  else entries = e;
  entries_tail = e;
  pthread_mutex_unlock(&lock);
  *out = e;
  return 1;
}

/* attach() for call->comm, inside a collective every rank makes: a failure
 * goes through the communicator's error handler. Returns 1, or 0 as
 * pccl_ip_start does. */
static int attach_new(pccl_ip_call_t *call, entry_t **out) {
  int cls = MPI_SUCCESS;
  const char *why = NULL;
  if (attach(call->comm, out, &cls, &why)) return 1;
  if (why) call->rc = pccl_ip_raise(call->comm, cls, why);
  else count(call->id, PCCL_IP_INVALID);
  return 0;
}

/* MPI_COMM_WORLD is attached in MPI_Init, where every rank is anyway: a
 * non-blocking call never attaches a communicator (collectives.c), so a
 * program whose collectives on it are all non-blocking would otherwise
 * never reach pccl. The ranks first agree to try (PCCL_MPI and a
 * well-formed environment on every rank), then on the outcome: a failure
 * on every rank (a malformed PCCL_* variable) is not raised here, the
 * first blocking collective tries again and raises it through the error
 * handler the program set by then; a failure on some ranks only (out of
 * memory) is raised at once, since the ranks would then take different
 * ways. Open MPI's Fortran MPI_INIT calls PMPI_Init: fortran.c's comes
 * here (the mpi_f08 module's too, through ompi_init_f). */
static void attach_world(void) {
  pthread_once(&env_once, read_env);
  int ok = enabled && !env_error[0] && hooks();
  if (PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !ok)
    return;
  entry_t *e = NULL;
  int cls = MPI_SUCCESS, all = 0;
  const char *why = NULL;
  ok = attach(MPI_COMM_WORLD, &e, &cls, &why);
  all = ok;
  if (PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
    all = 0;
  if (all || (!ok && !why)) return;
  int any = ok;
  PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any)
    pccl_ip_raise(MPI_COMM_WORLD, ok ? MPI_ERR_OTHER : cls,
                  ok ? "pccl: another rank could not attach MPI_COMM_WORLD in MPI_Init (its own "
                       "error says why)"
                     : why);
}

PCCL_IP_API int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) attach_world();
  return rc;
}

PCCL_IP_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) attach_world();
  return rc;
}

/* pccl_ip_start; with `attach` 0 a communicator not yet attached is not
 * attached (attaching is collective) and the call goes to MPI as `reason`
 * says. */
static int start_call(pccl_ip_call_t *call, pccl_ip_call_id_t id, MPI_Comm comm,
                      pccl_ip_reason_t reason, int attach) {
  pccl_ip_reason_t unattached = reason;
  if (!attach) reason = PCCL_IP_TAKEN;
  *call = (pccl_ip_call_t){.id = id, .comm = comm, .rc = MPI_SUCCESS};
  if (depth > 0) return 0;
  if (!hooks()) return 0; /* before MPI_Init or after MPI_Finalize: MPI says */
  if (env_error[0] && comm != MPI_COMM_NULL) {
    call->rc = pccl_ip_raise(comm, MPI_ERR_OTHER, env_error);
    return 0;
  }
  if (!enabled) reason = PCCL_IP_OFF;
  else if (reason == PCCL_IP_TAKEN && comm == MPI_COMM_NULL) reason = PCCL_IP_INVALID;
  if (reason != PCCL_IP_TAKEN) {
    count(id, reason);
    return 0;
  }
  entry_t *e = NULL;
  unsigned gen = atomic_load_explicit(&deletes, memory_order_acquire);
  if (last.valid && last.comm == comm && last.gen == gen) {
    e = last.e;
  } else {
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &e, &found) != MPI_SUCCESS) {
      count(id, PCCL_IP_INVALID);
      return 0;
    }
    if (!found && !attach) {
      count(id, unattached);
      return 0;
    }
    if (!found && !attach_new(call, &e)) return 0;
    last.comm = comm, last.e = e, last.gen = gen, last.valid = 1;
  }
  if (!e->pc) {
    count(id, PCCL_IP_INTERCOMM);
    return 0;
  }
  call->pc = e->pc;
  call->entry = e;
  call->rank = e->rank;
  call->size = e->size;
  call->gen = gen;
  enter_pccl();
  return 1;
}

int pccl_ip_start(pccl_ip_call_t *call, pccl_ip_call_id_t id, MPI_Comm comm,
                  pccl_ip_reason_t reason) {
  return start_call(call, id, comm, reason, 1);
}

int pccl_ip_start_attached(pccl_ip_call_t *call, pccl_ip_call_id_t id, MPI_Comm comm,
                           pccl_ip_reason_t reason) {
  return start_call(call, id, comm, reason, 0);
}

int pccl_ip_again(const pccl_ip_call_t *call) {
  if (depth > 0 || !atomic_load_explicit(&hooks_ready, memory_order_acquire) ||
      atomic_load(&finalizing) || atomic_load_explicit(&deletes, memory_order_acquire) != call->gen)
    return 0;
  enter_pccl();
  return 1;
}

int pccl_ip_outcome(const pccl_ip_call_t *call, pccl_status_t st, int mpi_rc, const char *what,
                    char *why, size_t len) {
  if (st != PCCL_OK) {
    snprintf(why, len, "%s", pccl_last_error(call->pc));
    return error_class(st);
  }
  if (mpi_rc == MPI_SUCCESS) return MPI_SUCCESS;
  int cls = MPI_ERR_OTHER;
  PMPI_Error_class(mpi_rc, &cls);
  snprintf(why, len, "%s", what);
  return cls;
}

int pccl_ip_finish(pccl_ip_call_t *call, pccl_status_t st, int mpi_rc, const char *what) {
  /* the communicator's last error is read inside: the progress thread may
   * write it once this thread is out */
  char why[PCCL_IP_WHY_LEN];
  int cls = pccl_ip_outcome(call, st, mpi_rc, what, why, sizeof why);
  leave_pccl();
  count(call->id, call->copied ? PCCL_IP_COPIED : PCCL_IP_TAKEN);
  return cls == MPI_SUCCESS ? MPI_SUCCESS : pccl_ip_raise(call->comm, cls, why);
}

void pccl_ip_decline(pccl_ip_call_t *call, pccl_ip_reason_t reason) {
  leave_pccl();
  count(call->id, reason);
  call->rc = MPI_SUCCESS;
}

void pccl_ip_issued(pccl_ip_call_t *call) {
  leave_pccl();
  count(call->id, call->copied ? PCCL_IP_COPIED : PCCL_IP_TAKEN);
  pthread_mutex_lock(&lock);
  ((entry_t *)call->entry)->holds++;
  pthread_mutex_unlock(&lock);
}

int pccl_ip_ended(pccl_ip_call_t *call, int cls, const char *why) {
  leave_pccl();
  count(call->id, call->copied ? PCCL_IP_COPIED : PCCL_IP_TAKEN);
  return cls == MPI_SUCCESS ? MPI_SUCCESS : pccl_ip_raise(call->comm, cls, why);
}

int pccl_ip_nb_small(size_t bytes) {
  pthread_once(&env_once, read_env);
  return bytes == SIZE_MAX ? nb_min > 0 : bytes < nb_min;
}

int pccl_ip_inside(void) { return depth > 0; }
void pccl_ip_inside_for_good(void) { depth = 1; }
void pccl_ip_enter(void) { enter_pccl(); }
void pccl_ip_exit(void) { leave_pccl(); }
