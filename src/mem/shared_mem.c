/* shared_mem.c - the shared allocator (see shared_mem.h) and its public face,
 * pccl_mem_alloc / pccl_mem_free. */
#define _GNU_SOURCE /* memfd_create */
#include "shared_mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errmsg.h"

typedef struct {
  char *base;
  size_t size;
  int fd;
  uint64_t id;
} region_t;

/* The live allocations, unordered: lookups are rare next to the copies they
 * save, and a process holds few of these. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static region_t *regions;
static size_t nregions, capacity;
static uint64_t next_id = 1;

static int remember(char *base, size_t size, int fd) {
  if (nregions == capacity) {
    size_t cap = capacity ? 2 * capacity : 16;
    region_t *r = realloc(regions, cap * sizeof(*r));
    if (!r) return 0;
    regions = r;
    capacity = cap;
  }
  regions[nregions++] = (region_t){base, size, fd, next_id++};
  return 1;
}

pccl_status_t pccl__shmem_alloc(size_t bytes, void **ptr) {
#if defined(__linux__)
  long page = sysconf(_SC_PAGESIZE);
  if (bytes == 0 || bytes > (size_t)PTRDIFF_MAX - (size_t)page) return PCCL_ERR_INVALID_ARGUMENT;
  size_t size = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
  int fd = memfd_create("pccl", MFD_CLOEXEC);
  if (fd < 0) return PCCL_ERR_NO_MEMORY;
  void *base = MAP_FAILED;
  if (ftruncate(fd, (off_t)size) == 0)
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    close(fd);
    return PCCL_ERR_NO_MEMORY;
  }
  pthread_mutex_lock(&lock);
  int ok = remember(base, size, fd);
  pthread_mutex_unlock(&lock);
  if (!ok) {
    munmap(base, size);
    close(fd);
    return PCCL_ERR_NO_MEMORY;
  }
  *ptr = base;
  return PCCL_OK;
#else
  (void)bytes, (void)ptr;
  return PCCL_ERR_UNSUPPORTED;
#endif
}

pccl_status_t pccl__shmem_free(void *ptr) {
  pthread_mutex_lock(&lock);
  region_t r = {0};
  for (size_t i = 0; i < nregions; i++) {
    if (regions[i].base != ptr) continue;
    r = regions[i];
    regions[i] = regions[--nregions];
    break;
  }
  pthread_mutex_unlock(&lock);
  if (!r.base) return PCCL_ERR_INVALID_ARGUMENT;
  munmap(r.base, r.size);
  close(r.fd);
  return PCCL_OK;
}

int pccl__shmem_find(const void *p, size_t bytes, pccl_shmem_ref_t *ref) {
  const char *c = p;
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nregions && !found; i++) {
    const region_t *r = &regions[i];
    if (c < r->base || c > r->base + r->size || bytes > (size_t)(r->base + r->size - c)) continue;
    *ref = (pccl_shmem_ref_t){r->fd, r->id, (size_t)(c - r->base), r->size};
    found = 1;
  }
  pthread_mutex_unlock(&lock);
  return found;
}

pccl_status_t pccl_mem_alloc(void **ptr, size_t bytes) {
  if (!ptr) return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, "pccl_mem_alloc", "ptr is NULL");
  *ptr = NULL;
  if (bytes == 0)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, "pccl_mem_alloc", "size is 0");
  pccl_status_t st = pccl__shmem_alloc(bytes, ptr);
  if (st == PCCL_ERR_INVALID_ARGUMENT)
    return pccl__thread_error_set(st, "pccl_mem_alloc", "size %zu is too large", bytes);
  if (st != PCCL_OK)
    return pccl__thread_error_set(st, "pccl_mem_alloc", "cannot allocate %zu bytes of shared memory",
                       bytes);
  return PCCL_OK;
}

pccl_status_t pccl_mem_free(void *ptr) {
  if (!ptr) return PCCL_OK;
  if (pccl__shmem_free(ptr) != PCCL_OK)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, "pccl_mem_free",
                       "%p was not returned by pccl_mem_alloc (or was freed already)", ptr);
  return PCCL_OK;
}
