/* parts.h - runs the parts of a codec call on threads (the calling thread
 * takes part 0). Threads are made per call: the codec is called on arrays
 * large enough for that to be noise, and never in parallel inside the
 * collectives, which run one rank per core. */
#ifndef PCCL_PARTS_H
#define PCCL_PARTS_H

#include "pccl.h"

#define PCCL_CODEC_MAX_THREADS 64

/* Threads a codec call may use: PCCL_CODEC_THREADS (1..64, default 1).
 * PCCL_ERR_CONFIG with a message for a malformed value. */
pccl_status_t pccl__codec_threads(const char *where, int *threads);

/* Calls fn(arg, i) for i in 0..nparts-1, concurrently; a thread that cannot
 * be started has its part run on the caller. */
void pccl__run_parts(int nparts, void (*fn)(void *arg, int part), void *arg);

#endif
