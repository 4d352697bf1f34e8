/* test_tune.c - tuning tables: a good table parses and answers lookups as
 * written; every malformed table is refused with PCCL_ERR_CONFIG and a
 * message naming its line, never a crash; the built-in table parses and
 * matches the table file it was written with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

static int passed, failed;

static void expect(int ok, const char *what) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL %s\n", what);
}

static const char *good =
    "# comment line\n"
    "layout 16 2   # sixteen ranks, two per node\n"
    "allgather 65536 recmul:4\n"
    "allgather 4194304 hier_recmul:8\n"
    "allgather inf kring:2\n"
    "allreduce inf ring\n"
    "\n"
    "layout 64 8\n"
    "allgather 1024 recdbl\n";

static void test_good(void) {
  pccl_tune_table_t t;
  char err[256] = "";
  expect(pccl_tune_parse(good, &t, err, sizeof err) == PCCL_OK, "good table parses");
  expect(t.nsecs == 2 && t.nrows == 5, "good table: 2 layouts, 5 rows");
  const pccl_tune_section_t *s = pccl_tune_section(&t, 16, 2);
  expect(s && s->nranks == 16, "section for 16:2");
  expect(pccl_tune_section(&t, 20, 2) == s, "nearest rank count with the same ranks per node");
  expect(pccl_tune_section(&t, 16, 4) == NULL, "no section for another ranks per node");
  pccl_choice_t c = pccl_tune_lookup(&t, s, PCCL_COLL_ALLGATHER, 0, 65536);
  expect(c.algo && !strcmp(c.algo->name, "recmul") && c.k == 4, "64 KiB: recmul:4 (bound included)");
  c = pccl_tune_lookup(&t, s, PCCL_COLL_ALLGATHER, 0, 65537);
  expect(c.algo && !strcmp(c.algo->name, "hier_recmul") && c.k == 8, "64 KiB + 1: hier_recmul:8");
  c = pccl_tune_lookup(&t, s, PCCL_COLL_ALLGATHER, 0, (size_t)1 << 40);
  expect(c.algo && !strcmp(c.algo->name, "kring") && c.k == 2, "inf row: kring:2");
  c = pccl_tune_lookup(&t, s, PCCL_COLL_ALLREDUCE, 0, 8);
  expect(c.algo && !strcmp(c.algo->name, "ring") && c.k == 0, "allreduce: ring, no k");
  c = pccl_tune_lookup(&t, s, PCCL_COLL_REDUCE_SCATTER, 0, 8);
  expect(c.algo == NULL, "no row for reduce-scatter: no choice");
  const pccl_tune_section_t *s8 = pccl_tune_section(&t, 64, 8);
  c = pccl_tune_lookup(&t, s8, PCCL_COLL_ALLGATHER, 0, 1024);
  expect(c.algo && !strcmp(c.algo->name, "recdbl") && c.k == 2, "recdbl carries its fixed k=2");
  expect(pccl_tune_lookup(&t, s8, PCCL_COLL_ALLGATHER, 0, 1025).algo == NULL, "beyond the last row: none");
  expect(pccl_tune_hash(&t, s) != pccl_tune_hash(&t, s8), "sections hash apart");
  pccl_tune_free(&t);
}

static void test_bad(void) {
  static const char *bad[] = {
      "allgather 8 ring\n",                          /* row before a layout */
      "layout 16\n",                                 /* missing field */
      "layout 16 2 3\n",                             /* extra field */
      "layout 0 2\n",                                /* zero ranks */
      "layout -4 2\n",                               /* negative */
      "layout 16 x\n",                               /* not a number */
      "layout 16 2\nlayout 16 2\n",                  /* duplicate */
      "layout 16 2\ngather_all 8 ring\n",            /* unknown collective */
      "layout 16 2\nallgather 8 nosuch\n",           /* unknown algorithm */
      "layout 16 2\nallgather 8 ring:4\n",           /* k for an algorithm without one */
      "layout 16 2\nallgather 8 recmul:1\n",         /* k too small */
      "layout 16 2\nallgather 8 recmul:99999\n",     /* k too large */
      "layout 16 2\nallgather 8 recmul:\n",          /* empty k */
      "layout 16 2\nallgather 8 recmul:4x\n",        /* trailing junk */
      "layout 16 2\nallgather -8 ring\n",            /* negative size */
      "layout 16 2\nallgather 8K ring\n",            /* suffixes are not part of the format */
      "layout 16 2\nallgather 99999999999999999999999 ring\n", /* overflow */
      "layout 16 2\nallgather 64 ring\nallgather 64 bruck\n",  /* not increasing */
      "layout 16 2\nallgather inf ring\nallgather 64 bruck\n", /* after inf */
      "layout 16 2\nallgather 8 ring extra\n",       /* too many fields */
      "layout 16 2\nallgather\n",                    /* too few */
      "frobnicate 1 2\n",                            /* unknown keyword */
      "layout 16 2\nallreduce 8 zring\n",            /* compressed algorithm in a plain row */
      "layout 16 2\nlossy allreduce 8\n",            /* lossy row too short */
      "layout 16 2\nlossy lossy allreduce 8 zring\n", /* twice */
      "layout 16 2\nlossy allreduce 64 zring\nlossy allreduce 64 ring\n", /* not increasing */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pccl_tune_table_t t;
    char err[256] = "";
    pccl_status_t st = pccl_tune_parse(bad[i], &t, err, sizeof err);
    char what[160];
    snprintf(what, sizeof what, "malformed table %zu refused with a message naming a line", i);
    expect(st == PCCL_ERR_CONFIG && strstr(err, "line ") != NULL && t.rows == NULL, what);
  }
  /* An over-long line. */
  char *long_line = malloc(4096);
  memset(long_line, 'a', 4095);
  long_line[4095] = '\0';
  pccl_tune_table_t t;
  char err[256];
  expect(pccl_tune_parse(long_line, &t, err, sizeof err) == PCCL_ERR_CONFIG, "over-long line refused");
  free(long_line);
  expect(pccl_tune_load("/nonexistent/pccl.tuning", &t, err, sizeof err) == PCCL_ERR_CONFIG,
         "missing file refused");
}

/* Rows for the lossy calls: apart from the plain ones, compressed or plain
 * algorithms, their own increasing sizes, in the hash. */
static void test_lossy(void) {
  const char *text = "layout 16 2\n"
                     "allreduce 1024 recdbl\n"
                     "allreduce inf ring\n"
                     "lossy allreduce 4096 recdbl\n"
                     "lossy allreduce 1048576 zrecdbl\n"
                     "lossy allreduce inf zring\n"
                     "lossy scatter inf zbinomial\n";
  pccl_tune_table_t t, u;
  char err[256] = "";
  expect(pccl_tune_parse(text, &t, err, sizeof err) == PCCL_OK, "lossy rows parse");
  const pccl_tune_section_t *s = pccl_tune_section(&t, 16, 2);
  struct { pccl_coll_t coll; int lossy; size_t bytes; const char *want; } cases[] = {
      {PCCL_COLL_ALLREDUCE, 0, 512, "recdbl"},   {PCCL_COLL_ALLREDUCE, 0, 1 << 20, "ring"},
      {PCCL_COLL_ALLREDUCE, 1, 512, "recdbl"},   {PCCL_COLL_ALLREDUCE, 1, 8192, "zrecdbl"},
      {PCCL_COLL_ALLREDUCE, 1, 1 << 20, "zrecdbl"}, {PCCL_COLL_ALLREDUCE, 1, (1 << 20) + 1, "zring"},
      {PCCL_COLL_SCATTER, 1, 64, "zbinomial"},   {PCCL_COLL_SCATTER, 0, 64, NULL},
  };
  for (size_t i = 0; s && i < sizeof cases / sizeof cases[0]; i++) {
    pccl_choice_t c = pccl_tune_lookup(&t, s, cases[i].coll, cases[i].lossy, cases[i].bytes);
    char what[160];
    snprintf(what, sizeof what, "lookup %s lossy=%d at %zu: %s", pccl_coll_name(cases[i].coll),
             cases[i].lossy, cases[i].bytes, cases[i].want ? cases[i].want : "none");
    expect(cases[i].want ? c.algo && strcmp(c.algo->name, cases[i].want) == 0 : c.algo == NULL, what);
  }
  pccl_tune_free(&t);
  /* The same rows, one marked plain instead: the hash tells them apart. */
  expect(pccl_tune_parse("layout 16 2\nallreduce inf ring\n", &u, err, sizeof err) == PCCL_OK &&
             pccl_tune_parse("layout 16 2\nlossy allreduce inf ring\n", &t, err, sizeof err) == PCCL_OK,
         "one plain and one lossy ring row parse");
  expect(pccl_tune_hash(&t, &t.secs[0]) != pccl_tune_hash(&u, &u.secs[0]), "lossy rows hash apart");
  pccl_tune_free(&t);
  pccl_tune_free(&u);
}

/* The built-in table parses and holds the rows of the file it was written
 * beside (profiles/frontier.tuning, path given as argv[1]): the same
 * sections in the same order, each with the same rows (their hash). */
static void test_builtin(const char *file) {
  pccl_tune_table_t t, f;
  char err[256] = "";
  expect(pccl_tune_parse(pccl_tune_builtin, &t, err, sizeof err) == PCCL_OK, "built-in table parses");
  if (err[0]) printf("  %s\n", err);
  if (!file) {
    pccl_tune_free(&t);
    return;
  }
  err[0] = '\0';
  expect(pccl_tune_load(file, &f, err, sizeof err) == PCCL_OK, "the table file parses");
  if (err[0]) printf("  %s\n", err);
  int same = t.nsecs == f.nsecs && t.nrows == f.nrows;
  for (int i = 0; same && i < t.nsecs; i++)
    same = t.secs[i].nranks == f.secs[i].nranks && t.secs[i].ranks_per_node == f.secs[i].ranks_per_node &&
           pccl_tune_hash(&t, &t.secs[i]) == pccl_tune_hash(&f, &f.secs[i]);
  expect(same, "built-in table = the table file, section by section");
  pccl_tune_free(&t);
  pccl_tune_free(&f);
}

int main(int argc, char **argv) {
  test_good();
  test_bad();
  test_lossy();
  test_builtin(argc > 1 ? argv[1] : NULL);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
