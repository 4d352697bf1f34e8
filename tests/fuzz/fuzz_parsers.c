/* fuzz_parsers.c - libFuzzer target for the text parsers that read what
 * users and files give pccl: PCCL_ALGO lists, the integer and seconds values
 * of environment variables, tuning tables (PCCL_TUNING_FILE) and machine
 * profiles. The first byte picks the parser; the rest, as a C string, is the
 * text. Each parser must accept it or return PCCL_ERR_CONFIG with a message
 * (never crash, read out of bounds or leak), and what it accepts must hold:
 * numbers within their range, a table that answers lookups and hashes, a
 * profile that its own check and writer take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_check.h"
#include "sim.h"
#include "table.h"

enum { P_ALGO, P_INT, P_SECONDS, P_TUNING, P_PROFILE, NPARSERS };

static void algo_list(const char *text, char *err, size_t len) {
  pccl_choice_t forced[PCCL_COLL_COUNT] = {{0}};
  pccl_algo_set_t excluded = {{0}};
  pccl_status_t st = pccl__parse_algo_list(text, forced, &excluded, err, len);
  CHECK(st == PCCL_OK || st == PCCL_ERR_CONFIG || st == PCCL_ERR_NO_MEMORY);
  if (st == PCCL_ERR_CONFIG) CHECK(err[0] != '\0');
  for (int c = 0; c < PCCL_COLL_COUNT && st == PCCL_OK; c++)
    if (forced[c].algo) CHECK(forced[c].algo->name != NULL);
}

static void numbers(const char *text, char *err, size_t len) {
  long v = -1;
  pccl_status_t st = pccl__parse_int("PCCL_X", text, 1, 1L << 30, &v, err, len);
  CHECK(st == PCCL_OK ? v >= 1 && v <= (1L << 30) : st == PCCL_ERR_CONFIG && err[0]);
  double s = -1;
  st = pccl__parse_seconds("PCCL_TIMEOUT", text, 1e9, &s, err, len);
  CHECK(st == PCCL_OK ? s >= 0 && s <= 1e9 : st == PCCL_ERR_CONFIG && err[0]);
}

static void tuning(const char *text, char *err, size_t len) {
  pccl_tune_table_t t;
  pccl_status_t st = pccl_tune_parse(text, &t, err, len);
  CHECK(st == PCCL_OK || st == PCCL_ERR_CONFIG || st == PCCL_ERR_NO_MEMORY);
  if (st != PCCL_OK) {
    CHECK(st != PCCL_ERR_CONFIG || err[0] != '\0');
    return;
  }
  for (int i = 0; i < t.nsecs; i++) {
    const pccl_tune_section_t *s = &t.secs[i];
    CHECK(pccl_tune_section(&t, s->nranks, s->ranks_per_node) != NULL);
    (void)pccl_tune_hash(&t, s);
    for (int c = 0; c < PCCL_COLL_COUNT; c++)
      for (size_t bytes = 1; bytes < ((size_t)1 << 40); bytes <<= 7) {
        pccl_choice_t ch = pccl_tune_lookup(&t, s, (pccl_coll_t)c, bytes & 1, bytes);
        if (ch.algo) CHECK(ch.algo->name != NULL);
      }
  }
  pccl_tune_free(&t);
}

static void profile(const char *text, char *err, size_t len) {
  pccl_profile_t p;
  pccl_status_t st = pccl_profile_parse(text, &p, err, len);
  CHECK(st == PCCL_OK || st == PCCL_ERR_CONFIG || st == PCCL_ERR_INVALID_ARGUMENT);
  if (st != PCCL_OK) {
    CHECK(err[0] != '\0');
    return;
  }
  CHECK(pccl_profile_check(&p, err, len) == PCCL_OK);
  FILE *sink = fopen("/dev/null", "w");
  if (sink) {
    CHECK(pccl_profile_write(sink, &p) == PCCL_OK);
    fclose(sink);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  char *text = malloc(size);
  CHECK(text != NULL);
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  char err[512] = "";
  switch (data[0] % NPARSERS) {
    case P_ALGO: algo_list(text, err, sizeof err); break;
    case P_INT:
    case P_SECONDS: numbers(text, err, sizeof err); break;
    case P_TUNING: tuning(text, err, sizeof err); break;
    default: profile(text, err, sizeof err); break;
  }
  free(text);
  return 0;
}
