/* options.c - pccl-profile's command line: the usage text, defaults, and
 * strict checks of every value (exit status 2 for anything malformed). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "profile_tool.h"

#define DEFAULT_REPS 9
#define MAX_REPS 1000
#define DEFAULT_MIN_SIZE ((size_t)64 << 10)
#define DEFAULT_MAX_SIZE ((size_t)16 << 20)
#define MIN_MIN_SIZE ((size_t)1 << 10)
#define MAX_MAX_SIZE ((size_t)1 << 30)
#define MAX_NODE_RADIX (1 << 20) /* the profile format's limit */
#define MAX_HOST_CORES (1 << 16) /* the profile format's limit */

void prof_print_usage(FILE *out) {
  fputs("usage: mpirun -np N pccl-profile -o FILE [options]   (N >= 2)\n"
        "Measures L, o_s, o_r, g, G between two ranks of one node (intra) and of two\n"
        "nodes (inter), and copy and gamma on rank 0; writes a machine profile\n"
        "(docs/profile-format.md) and prints a table. Methods: docs/profiler.md.\n"
        "Nodes: MPI's shared-memory split, or PCCL_RANKS_PER_NODE consecutive ranks.\n"
        "  -o FILE           write the profile to FILE; required\n"
        "  --name NAME       the profile's name: letters, digits, '_', '-', '.'\n"
        "                    (default: rank 0's host name)\n"
        "  --reps N          repetitions of each measurement, 1 to 1000; the median\n"
        "                    is kept (default 9)\n"
        "  --min-size BYTES  smallest message of the G sweep, 1K to half of\n"
        "                    --max-size (default 64K)\n"
        "  --max-size BYTES  largest message of the G sweep (from --min-size,\n"
        "                    doubling), 2K to 1G; K, M, G are powers of 1024\n"
        "                    (default 16M)\n"
        "  --loaded          the ranks not measuring poll MPI without pause, as ranks\n"
        "                    inside a collective do, instead of sleeping: the numbers\n"
        "                    then include the contention for cores of a full machine\n"
        "  --node-radix N    transfers one NIC carries at once, 0 (no limit) to 2^20,\n"
        "                    written to the profile as known, not measured (default 0)\n"
        "  --host-cores N    every node is emulated on one host of N cores (1 to\n"
        "                    65536): measure what a message between nodes costs it\n"
        "                    (all ranks exchanging at once) and write host_cores N and\n"
        "                    host_message (default: not measured, nodes have CPUs\n"
        "                    of their own)\n"
        "  -h, --help        show this help\n"
        "exit status: 0 success, 1 measuring or writing failed, 2 bad arguments,\n"
        "environment or fewer than 2 ranks\n",
        out);
}

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

static int valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= PCCL_PROFILE_TEXT) return 0;
  for (size_t i = 0; i < n; i++)
    if (!name_char(s[i])) return 0;
  return 1;
}

/* The host name with characters a profile name may not hold made '_'. */
static void default_name(char *name, size_t len) {
  char host[PCCL_PROFILE_TEXT] = "";
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "measured");
  for (char *c = host; *c; c++)
    if (!name_char(*c)) *c = '_';
  snprintf(name, len, "%s", host);
}

static int fail(char *err, size_t errlen, const char *what, const char *opt, const char *val) {
  if (val)
    snprintf(err, errlen, "%s '%s': %s (see --help)", opt, val, what);
  else
    snprintf(err, errlen, "%s: %s (see --help)", opt, what);
  return PROF_EXIT_USAGE;
}

int prof_parse_options(int argc, char **argv, prof_options_t *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  o->reps = DEFAULT_REPS;
  o->min_size = DEFAULT_MIN_SIZE;
  o->max_size = DEFAULT_MAX_SIZE;
  default_name(o->name, sizeof o->name);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      o->help = 1;
      return PROF_EXIT_OK;
    }
    if (strcmp(a, "--loaded") == 0) {
      o->loaded = 1;
      continue;
    }
    if (strcmp(a, "-o") && strcmp(a, "--name") && strcmp(a, "--reps") && strcmp(a, "--max-size") &&
        strcmp(a, "--min-size") && strcmp(a, "--node-radix") && strcmp(a, "--host-cores"))
      return fail(err, errlen, "unknown option", a, NULL);
    if (!v) return fail(err, errlen, "needs a value", a, NULL);
    i++;
    if (strcmp(a, "-o") == 0) {
      if (!v[0]) return fail(err, errlen, "empty file name", a, NULL);
      o->out_path = v;
    } else if (strcmp(a, "--name") == 0) {
      if (!valid_name(v))
        return fail(err, errlen, "1 to 255 letters, digits, '_', '-', '.' expected", a, v);
      snprintf(o->name, sizeof o->name, "%s", v);
    } else if (strcmp(a, "--reps") == 0) {
      if (!pccl_cli_int(v, 1, MAX_REPS, &o->reps)) return fail(err, errlen, "an integer 1 to 1000 expected", a, v);
    } else if (strcmp(a, "--node-radix") == 0) {
      if (!pccl_cli_int(v, 0, MAX_NODE_RADIX, &o->node_radix))
        return fail(err, errlen, "an integer 0 to 1048576 expected", a, v);
    } else if (strcmp(a, "--host-cores") == 0) {
      if (!pccl_cli_int(v, 1, MAX_HOST_CORES, &o->host_cores))
        return fail(err, errlen, "an integer 1 to 65536 expected", a, v);
    } else if (strcmp(a, "--min-size") == 0) {
      if (!pccl_cli_size(v, &o->min_size) || o->min_size < MIN_MIN_SIZE ||
          o->min_size > MAX_MAX_SIZE / 2)
        return fail(err, errlen, "a size from 1K to 512M expected", a, v);
    } else if (!pccl_cli_size(v, &o->max_size) || o->max_size < 2 * MIN_MIN_SIZE ||
               o->max_size > MAX_MAX_SIZE) {
      return fail(err, errlen, "a size from 2K to 1G expected", a, v);
    }
  }
  if (o->min_size > o->max_size / 2)
    return fail(err, errlen, "must be at most half of --max-size", "--min-size", NULL);
  if (!o->out_path) return fail(err, errlen, "is required", "-o FILE", NULL);
  return PROF_EXIT_OK;
}
