/* shared_mem.h - memory that the other ranks of a node can map.
 *
 * Every allocation is its own anonymous file (memfd), mapped shared. The shm
 * transport names a buffer inside one by (file descriptor, allocation id,
 * offset); a peer opens the file through /proc/<pid>/fd/<fd> and maps it, so
 * it copies or reduces with plain loads instead of a system call per message.
 * Ids are never reused, so a peer's cached mapping can never name a newer
 * allocation that happens to get the same descriptor number. A peer keeps
 * its mappings (up to a small number per communicator, oldest dropped first)
 * after the owner frees the allocation, so the pages of a freed buffer live
 * on until the peer drops or destroys them. */
#ifndef PCCL_SHARED_MEM_H
#define PCCL_SHARED_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

typedef struct {
  int fd;       /* in the owner's process */
  uint64_t id;  /* unique within the owner's process */
  size_t off;   /* of the buffer inside the allocation */
  size_t size;  /* of the whole allocation (what a peer maps) */
} pccl_shmem_ref_t;

/* Allocates `bytes` (> 0) of shared, page-aligned, zeroed memory. */
pccl_status_t pccl__shmem_alloc(size_t bytes, void **ptr);
/* Frees memory from pccl__shmem_alloc; PCCL_ERR_INVALID_ARGUMENT for any
 * other pointer (nothing is freed then). */
pccl_status_t pccl__shmem_free(void *ptr);
/* Whether [p, p + bytes) lies inside one allocation; fills *ref if so. */
int pccl__shmem_find(const void *p, size_t bytes, pccl_shmem_ref_t *ref);

#endif /* PCCL_SHARED_MEM_H */
