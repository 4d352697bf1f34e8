/* cli.h - number parsing shared by the command-line tools (pccl-sim,
 * pccl-tune, pccl-profile): strict, so a malformed value is an error. */
#ifndef PCCL_TOOLS_CLI_H
#define PCCL_TOOLS_CLI_H

#include <stddef.h>

/* A byte count: decimal digits with an optional K, M or G (powers of 1024).
 * 1 when it parses and is not zero. */
int pccl_cli_size(const char *text, size_t *bytes);

/* A decimal integer in [min, max] and nothing else. */
int pccl_cli_int(const char *text, int min, int max, int *out);

/* A decimal number (digits, an optional '.', an optional exponent; no sign,
 * hexadecimal, inf or nan) in [min, max] and nothing else. */
int pccl_cli_real(const char *text, double min, double max, double *out);

#endif /* PCCL_TOOLS_CLI_H */
