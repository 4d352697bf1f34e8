/* cma.h - cross-memory attach: copying between this process and another
 * process of the node by its pid (process_vm_readv, process_vm_writev),
 * without either mapping the other's memory. The shm transport moves its
 * single copies with it, the node segment its direct calls (seg.c). */
#ifndef PCCL_CMA_H
#define PCCL_CMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads `bytes` at address `remote` of process `pid` into `mine`; 1 on
 * success, 0 when the kernel refused (errno says why). */
int pccl_cma_read(pid_t pid, void *mine, uint64_t remote, size_t bytes);
/* Writes `bytes` from `mine` to address `remote` of process `pid`. */
int pccl_cma_write(pid_t pid, uint64_t remote, const void *mine, size_t bytes);
/* Lets any process of this user attach (Yama's ptrace_scope 1 otherwise
 * allows only declared tracers, and cross-memory attach is checked alike). */
void pccl_cma_allow(void);

/* Memcheck cannot see what a peer's process_vm_writev puts into this
 * process's memory and would call those bytes uninitialised: a receiver
 * says they are written (a no-op outside Valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define PCCL_PEER_WROTE(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#endif
#endif
#ifndef PCCL_PEER_WROTE
#define PCCL_PEER_WROTE(p, n) ((void)(p), (void)(n))
#endif

#endif /* PCCL_CMA_H */
