/* select.h - which algorithm runs a call: the communicator's forced choice
 * (pccl_comm_set_algo / PCCL_ALGO), else the tuning table, else the default
 * rules. */
#ifndef PCCL_SELECT_H
#define PCCL_SELECT_H

#include "comm.h"

/* `bytes` is the call's size as nccl-tests reports it (all-gather: output per
 * rank; reduce-scatter: input per rank; otherwise one buffer). */
/* What pccl__select may not pick: the node segment (pccl's own
 * non-blocking calls); for a non-blocking call (PCCL_SELECT_NB)
 * the segment only where it takes it without waiting (pccl__seg_takes_nb);
 * and for pccl's own calls what PCCL_ALGO forces (it names the user's
 * calls). */
#define PCCL_SELECT_NO_SEG 1u
#define PCCL_SELECT_UNFORCED 2u
#define PCCL_SELECT_NB 4u
/* A v-call whose largest block is PCCL_SKEW times the mean or more (an
 * all-gatherv's or reduce-scatterv's, whose counts every rank sees): the
 * rows for such calls apply (select.c). */
#define PCCL_SELECT_SKEWED 8u
#define PCCL_SKEW 4
pccl_choice_t pccl__select(pccl_comm_t *comm, pccl_coll_t coll, size_t bytes, unsigned flags);
/* How a node-segment algorithm moves its data. */
pccl_seg_path_t pccl__seg_path(pccl_algo_id_t id);
/* Whether the node segment runs a non-blocking call of `coll` with
 * node-segment algorithm `ch`. */
int pccl__seg_takes_nb(const pccl_comm_t *comm, pccl_choice_t ch, pccl_coll_t coll);
/* The compressed algorithm for a pccl_*_lossy call. */
pccl_choice_t pccl__select_lossy(pccl_comm_t *comm, pccl_coll_t coll, size_t bytes);

#endif /* PCCL_SELECT_H */
