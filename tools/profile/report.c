/* report.c - pccl-profile's output: the profile built from the
 * measurements (a level without a pair takes the other level's numbers), a
 * human-readable table on stdout, and the profile file (comment lines on how
 * it was measured, then pccl_profile_write), written to a temporary file,
 * renamed into place and read back with pccl_profile_load as a check. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile_tool.h"

static const char *const level_name[PCCL_LEVEL_COUNT] = {"intra", "inter"};

/* ---- the profile ------------------------------------------------------------- */

static void layout_text(const prof_layout_t *lay, char *s, size_t len) {
  if (lay->fake_per_node > 0)
    snprintf(s, len, "%d ranks, %d node%s of PCCL_RANKS_PER_NODE=%ld", lay->size, lay->nnodes,
             lay->nnodes == 1 ? "" : "s", lay->fake_per_node);
  else
    snprintf(s, len, "%d ranks on %d node%s (MPI shared-memory split)", lay->size, lay->nnodes,
             lay->nnodes == 1 ? "" : "s");
}

static void pair_text(const prof_layout_t *lay, pccl_level_t l, char *s, size_t len) {
  if (lay->peer[l] >= 0)
    snprintf(s, len, "%s 0-%d", level_name[l], lay->peer[l]);
  else
    snprintf(s, len, "%s copied from %s (no pair)", level_name[l], level_name[1 - l]);
}

static void build_profile(const prof_options_t *o, const prof_layout_t *lay,
                          const prof_level_t lv[PCCL_LEVEL_COUNT], const prof_host_t *host,
                          double copy, double gamma, pccl_profile_t *p) {
  char where[96], pair[2][48]; /* short enough for the 255 characters of source */
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", o->name);
  layout_text(lay, where, sizeof where);
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) pair_text(lay, (pccl_level_t)l, pair[l], sizeof pair[l]);
  snprintf(p->source, sizeof p->source, "pccl-profile (docs/profiler.md): %s; %s; %s%s",
           where, pair[0], pair[1], o->loaded ? "; loaded" : "");
  p->ranks_per_node = lay->ranks_per_node < (1 << 16) ? lay->ranks_per_node : 1 << 16;
  p->nics_per_node = 1;
  p->device_radix = 0;
  p->node_radix = o->node_radix;
  p->copy = copy;
  p->gamma = gamma;
  p->compress = PCCL_PROFILE_COMPRESS_DEFAULT; /* not measured */
  p->decompress = PCCL_PROFILE_DECOMPRESS_DEFAULT;
  if (o->host_cores > 0) {
    p->host_cores = o->host_cores;
    p->host_message = host->message;
  }
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) {
    const prof_level_t *m = lv[l].peer >= 0 ? &lv[l] : &lv[1 - l];
    p->level[l] = (pccl_loggp_t){m->L, m->o_s, m->o_r, m->g, m->G};
  }
}

/* ---- the table ------------------------------------------------------------------ */

static void print_table(const prof_options_t *o, const prof_layout_t *lay,
                        const prof_level_t lv[PCCL_LEVEL_COUNT], const prof_host_t *host,
                        const pccl_profile_t *p) {
  char where[128];
  layout_text(lay, where, sizeof where);
  printf("pccl-profile: %s, %d ranks on rank 0's node; %d repetitions, median kept\n", where,
         lay->ranks_per_node, o->reps);
  printf("\n%-6s %-6s %10s %10s %10s %10s %10s %12s %12s\n", "level", "pair", "halfRTT/us",
         "L/us", "o_s/us", "o_r/us", "g/us", "G/(ns/B)", "1/G/(MB/s)");
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) {
    const pccl_loggp_t *x = &p->level[l];
    const prof_level_t *m = lv[l].peer >= 0 ? &lv[l] : &lv[1 - l];
    char pair[16];
    if (lv[l].peer >= 0)
      snprintf(pair, sizeof pair, "0-%d", lv[l].peer);
    else
      snprintf(pair, sizeof pair, "copy");
    printf("%-6s %-6s %10.3f %10.3f %10.3f %10.3f %10.3f %12.5f %12.1f\n", level_name[l], pair,
           m->half_rtt * 1e6, x->L * 1e6, x->o_s * 1e6, x->o_r * 1e6, x->g * 1e6, x->G * 1e9,
           x->G > 0 ? 1e-6 / x->G : 0.0);
  }
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) {
    if (lv[l].peer < 0) continue;
    printf("\n%s sweep (half round trip by size):", level_name[l]);
    for (int i = 0; i < lv[l].npoints; i++)
      printf("%s%zuK %.1fus", i % 4 ? ", " : "\n  ", lv[l].size[i] >> 10, lv[l].time[i] * 1e6);
    printf("\n%s bursts: 16 messages %.2fus, 128 messages %.2fus\n", level_name[l],
           lv[l].burst_short * 1e6, lv[l].burst_long * 1e6);
  }
  printf("\nlocal (rank 0): copy %.4f ns/B (%.0f MB/s), gamma %.4f ns/B (%.0f MB/s)\n",
         p->copy * 1e9, p->copy > 0 ? 1e-6 / p->copy : 0.0, p->gamma * 1e9,
         p->gamma > 0 ? 1e-6 / p->gamma : 0.0);
  if (o->host_cores > 0)
    printf("host (%d core%s): %d ranks exchanging 1 byte between nodes at once %.1fus, rank 0's "
           "pair alone %.1fus: host_message %.2fus\n",
           o->host_cores, o->host_cores == 1 ? "" : "s", lay->npartnered, host->all * 1e6, host->one * 1e6, host->message * 1e6);
  printf("not measured: nics_per_node 1, device_radix 0, node_radix %d (%s)\n", p->node_radix,
         o->node_radix ? "as given" : "default");
}

/* ---- warnings ------------------------------------------------------------------- */

/* Writes every caveat of the measurement to f, each line prefixed. */
static void caveats(const prof_level_t lv[PCCL_LEVEL_COUNT], FILE *f, const char *prefix) {
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) {
    const char *n = level_name[l];
    if (lv[l].peer < 0) {
      fprintf(f, "%s%s copied from %s: %s\n", prefix, n, level_name[1 - l],
              l == PCCL_LEVEL_INTER ? "all ranks are on one node"
                                    : "no node holds two ranks (no intra pair)");
      continue;
    }
    if (lv[l].L_clamped)
      fprintf(f, "%s%s.L clamped to 0: half round trip < o_s + o_r + G\n", prefix, n);
    if (lv[l].g_clamped)
      fprintf(f, "%s%s.g clamped to 0: the long burst was not slower than the short\n", prefix,
              n);
    if (lv[l].G_clamped)
      fprintf(f, "%s%s.G clamped to 0: time did not grow with size\n", prefix, n);
  }
}

/* ---- the file ------------------------------------------------------------------- */

static void header(FILE *f, const prof_options_t *o, const prof_layout_t *lay,
                   const prof_level_t lv[PCCL_LEVEL_COUNT], const prof_host_t *hm) {
  char host[128] = "?", when[64] = "?", where[128];
  time_t now = time(NULL);
  struct tm tm;
  if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
  if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  for (char *c = host; *c; c++)
    if (*c < 0x20 || *c > 0x7e) *c = '?';
  layout_text(lay, where, sizeof where);
  fprintf(f, "# Measured by pccl-profile on %s, %s: %s.\n", host, when, where);
  fprintf(f, "# Methods: docs/profiler.md; %d repetitions (median), G sweep %zu to %zu bytes.\n",
          o->reps, o->min_size, o->max_size);
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++)
    if (lv[l].peer >= 0)
      fprintf(f, "# %s: rank 0 <-> rank %d; 1-byte half round trip %.6g s.\n", level_name[l],
              lv[l].peer, lv[l].half_rtt);
  if (o->loaded)
    fprintf(f, "# Loaded: the other ranks polled MPI without pause while each pair timed the\n"
               "# round trip, g and G; they slept while it timed o_s and o_r.\n");
  if (o->host_cores > 0)
    fprintf(f, "# Host: %d ranks exchanged 1 byte between nodes at once in %.6g s (rank 0's pair\n"
               "# alone: %.6g s); host_message = %d core%s x that / %d.\n",
            lay->npartnered, hm->all, hm->one, o->host_cores, o->host_cores == 1 ? "" : "s",
            lay->npartnered);
  fprintf(f, "# Not measured: nics_per_node 1, device_radix 0 (defaults), node_radix %d (%s)"
             " (0: no limit);\n# compress, decompress: szp on the development machine"
             " (docs/profile-format.md).\n",
          o->node_radix, o->node_radix ? "given by --node-radix" : "default");
  caveats(lv, f, "# NOTE: ");
}

static int same_profile(const pccl_profile_t *a, const pccl_profile_t *b) {
  if (strcmp(a->name, b->name) || strcmp(a->source, b->source)) return 0;
  if (a->ranks_per_node != b->ranks_per_node || a->nics_per_node != b->nics_per_node ||
      a->device_radix != b->device_radix || a->node_radix != b->node_radix)
    return 0;
  if (a->gamma != b->gamma || a->copy != b->copy || a->compress != b->compress ||
      a->decompress != b->decompress || a->duplex != b->duplex || a->host_cores != b->host_cores ||
      a->host_message != b->host_message)
    return 0;
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) {
    const pccl_loggp_t *x = &a->level[l], *y = &b->level[l];
    if (x->L != y->L || x->o_s != y->o_s || x->o_r != y->o_r || x->g != y->g || x->G != y->G)
      return 0;
  }
  return 1;
}

static int write_file(const prof_options_t *o, const prof_layout_t *lay,
                      const prof_level_t lv[PCCL_LEVEL_COUNT], const prof_host_t *host,
                      const pccl_profile_t *p) {
  size_t len = strlen(o->out_path) + 16;
  char *tmp = malloc(len), err[512];
  if (!tmp) {
    fprintf(stderr, "pccl-profile: out of memory\n");
    return PROF_EXIT_FAIL;
  }
  snprintf(tmp, len, "%s.tmp", o->out_path);
  FILE *f = fopen(tmp, "w");
  pccl_status_t st = PCCL_ERR_INVALID_ARGUMENT;
  int ok = 0;
  if (f) {
    header(f, o, lay, lv, host);
    st = pccl_profile_write(f, p);
    ok = fclose(f) == 0 && st == PCCL_OK && rename(tmp, o->out_path) == 0;
  }
  if (!ok) {
    fprintf(stderr, "pccl-profile: cannot write %s (via %s)%s\n", o->out_path, tmp,
            st == PCCL_ERR_CONFIG ? ": a measured value is out of the format's bounds" : "");
    remove(tmp);
    free(tmp);
    return PROF_EXIT_FAIL;
  }
  free(tmp);
  pccl_profile_t back;
  if (pccl_profile_load(o->out_path, &back, err, sizeof err) != PCCL_OK) {
    fprintf(stderr, "pccl-profile: the written profile does not load: %s\n", err);
    return PROF_EXIT_FAIL;
  }
  if (!same_profile(p, &back)) {
    fprintf(stderr, "pccl-profile: %s reads back with other values\n", o->out_path);
    return PROF_EXIT_FAIL;
  }
  printf("wrote %s (profile '%s'; reloaded with pccl_profile_load, identical)\n", o->out_path,
         p->name);
  return PROF_EXIT_OK;
}

int prof_report(const prof_options_t *o, const prof_layout_t *lay,
                const prof_level_t lv[PCCL_LEVEL_COUNT], const prof_host_t *host,
                double copy, double gamma) {
  pccl_profile_t p;
  build_profile(o, lay, lv, host, copy, gamma, &p);
  print_table(o, lay, lv, host, &p);
  caveats(lv, stderr, "pccl-profile: warning: ");
  fflush(stdout);
  return write_file(o, lay, lv, host, &p);
}
