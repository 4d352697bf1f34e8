/* parts.c - threads for the codec's parts; see parts.h. */
#include "parts.h"

#include <pthread.h>
#include <stdlib.h>

#include "parse.h"
#include "errmsg.h"

pccl_status_t pccl__codec_threads(const char *where, int *threads) {
  const char *text = getenv("PCCL_CODEC_THREADS");
  long v = 1;
  char err[160];
  if (text && *text &&
      pccl__parse_int("PCCL_CODEC_THREADS", text, 1, PCCL_CODEC_MAX_THREADS, &v, err, sizeof err) != PCCL_OK)
    return pccl__thread_error_set(PCCL_ERR_CONFIG, where, "%s", err);
  *threads = (int)v;
  return PCCL_OK;
}

typedef struct {
  void (*fn)(void *, int);
  void *arg;
  int part;
} job_t;

static void *run_job(void *p) {
  job_t *j = p;
  j->fn(j->arg, j->part);
  return NULL;
}

void pccl__run_parts(int nparts, void (*fn)(void *arg, int part), void *arg) {
  job_t jobs[PCCL_CODEC_MAX_THREADS];
  pthread_t tid[PCCL_CODEC_MAX_THREADS];
  int started[PCCL_CODEC_MAX_THREADS] = {0};
  if (nparts > PCCL_CODEC_MAX_THREADS) nparts = PCCL_CODEC_MAX_THREADS;
  for (int i = 1; i < nparts; i++) {
    jobs[i] = (job_t){fn, arg, i};
    started[i] = pthread_create(&tid[i], NULL, run_job, &jobs[i]) == 0;
  }
  fn(arg, 0);
  for (int i = 1; i < nparts; i++) {
    if (started[i])
      pthread_join(tid[i], NULL);
    else
      fn(arg, i);
  }
}
