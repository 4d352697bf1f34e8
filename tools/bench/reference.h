/* reference.h - the inputs pccl-bench feeds the collectives and the check of
 * pccl's output against results computed independently on each rank. */
#ifndef PCCL_BENCH_REFERENCE_H
#define PCCL_BENCH_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

/* Fills `elements` elements of `buffer` with this rank's deterministic input
 * in the run's datatype. */
void fill_input(const bench_t *b, void *buffer, size_t elements);

/* Whether pccl's output in b->recv is what case `c` should produce on this
 * rank, the inputs having come from fill_input; reports the first wrong
 * element on stderr. */
bool output_matches(const bench_t *b, const bench_case_t *c);

#endif
