/* timeline.c - the engine's Chrome-trace timeline (PCCL_TIMELINE): one row
 * per tensor, one complete event ("ph":"X") per phase, in the JSON array
 * form that chrome://tracing and Perfetto open. Written by the engine
 * thread alone; flushed at each cycle's end so a crashed run leaves a
 * readable prefix (the viewers accept an unterminated array). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The name with "%r" replaced by the rank; NULL when this rank writes
 * nothing (no "%r": rank 0 only). */
static char *path_for(const char *pattern, int rank) {
  const char *at = strstr(pattern, "%r");
  if (!at) return rank == 0 ? strdup(pattern) : NULL;
  size_t n = strlen(pattern) + 16;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%.*s%d%s", (int)(at - pattern), pattern, rank, at + 2);
  return p;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

pccl_status_t pccl_timeline_open(pccl_timeline_t *t, const char *pattern, int rank) {
  memset(t, 0, sizeof(*t));
  if (!pattern || !*pattern) return PCCL_OK;
  char *path = path_for(pattern, rank);
  if (!path) return PCCL_OK;
  t->f = fopen(path, "w");
  if (!t->f) {
    pccl__thread_error_set(PCCL_ERR_CONFIG, "pccl_engine_create",
                           "PCCL_TIMELINE: cannot write \"%s\"", path);
    free(path);
    return PCCL_ERR_CONFIG;
  }
  free(path);
  if (!pccl_strmap_init(&t->tids, 64)) {
    fclose(t->f);
    t->f = NULL;
    return PCCL_ERR_NO_MEMORY;
  }
  t->t0 = MPI_Wtime();
  t->first = 1;
  fputs("[\n", t->f);
  return PCCL_OK;
}

static void event_start(pccl_timeline_t *t) {
  if (!t->first) fputs(",\n", t->f);
  t->first = 0;
}

uint32_t pccl_timeline_row(pccl_timeline_t *t, const char *name) {
  if (!t->f) return 0;
  uintptr_t v = (uintptr_t)pccl_strmap_get(&t->tids, name);
  if (v) return (uint32_t)(v - 1);
  uint32_t row = t->next_tid++;
  if (!pccl_strmap_put(&t->tids, name, (void *)(uintptr_t)(row + 1))) return row;
  event_start(t);
  fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":", row);
  json_string(t->f, name);
  fputs("}}", t->f);
  return row;
}

void pccl_timeline_span(pccl_timeline_t *t, uint32_t row, const char *phase, double start,
                        double end) {
  if (!t->f) return;
  event_start(t);
  fprintf(t->f, "{\"name\":\"%s\",\"cat\":\"pccl\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,"
                "\"ts\":%.3f,\"dur\":%.3f}",
          phase, row, (start - t->t0) * 1e6, (end > start ? end - start : 0) * 1e6);
}

void pccl_timeline_close(pccl_timeline_t *t) {
  if (!t->f) return;
  fputs("\n]\n", t->f);
  fclose(t->f);
  pccl_strmap_free(&t->tids);
  memset(t, 0, sizeof(*t));
}
