/* fuzz_check.h - the fuzz harnesses' assertion: a failed property aborts,
 * which libFuzzer reports as a crash with the input that caused it. */
#ifndef PCCL_FUZZ_CHECK_H
#define PCCL_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                   \
    }                                                                            \
  } while (0)

#endif
