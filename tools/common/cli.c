/* cli.c - number parsing shared by the command-line tools; see cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pccl_cli_size(const char *text, size_t *bytes) {
  if (text[0] < '0' || text[0] > '9') return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10), unit = 1;
  if (errno == ERANGE) return 0;
  if (*end == 'K' || *end == 'k') unit = 1ull << 10;
  if (*end == 'M' || *end == 'm') unit = 1ull << 20;
  if (*end == 'G' || *end == 'g') unit = 1ull << 30;
  if (unit > 1) end++;
  if (*end != '\0' || v == 0 || v > SIZE_MAX / unit) return 0;
  *bytes = (size_t)(v * unit);
  return 1;
}

int pccl_cli_int(const char *text, int min, int max, int *out) {
  if (text[0] < '0' || text[0] > '9') return 0;
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < min || v > max) return 0;
  *out = (int)v;
  return 1;
}

int pccl_cli_real(const char *text, double min, double max, double *out) {
  if ((text[0] < '0' || text[0] > '9') && text[0] != '.') return 0;
  if (text[strspn(text, "0123456789.eE+-")] != '\0') return 0;
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v) || v < min || v > max) return 0;
  *out = v;
  return 1;
}
