/* pccl-cmabench - what cross-memory attach costs by the size of one call:
 * the rate of process_vm_readv and process_vm_writev moving BYTES between
 * this process and a forked child on the other core, in calls of each
 * piece size from 64 KiB up to BYTES. The direct calls of the node segment
 * move their data in pieces (DIRECT_PIECE in src/transport/seg/seg.c):
 * each call pins the far pages anew, a cost that differs between hosts.
 * Prints a table (GB/s, best of 5 blocks) and, with a file name, writes it
 * as CSV. Usage: pccl-cmabench [BYTES] [CSV] (BYTES default 1048576). */
#define _GNU_SOURCE /* process_vm_readv, sched_setaffinity */
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SMALLEST_PIECE ((size_t)64 << 10)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs the calling process on core `cpu` when the machine has it. */
static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

/* GB/s of the best of 5 blocks moving n bytes between `mine` and the same
 * address in `child` (a fork: its copy of `far`), in calls of `piece`. */
static double rate(pid_t child, char *mine, char *far, size_t n, size_t piece, int write) {
  int iters = (int)(2e9 / (double)n) + 1;
  double best = 1e30;
  for (int b = 0; b < 5; b++) {
    double t = now();
    for (int i = 0; i < iters; i++)
      for (size_t at = 0; at < n; at += piece) {
        size_t k = n - at < piece ? n - at : piece;
        struct iovec local = {mine + at, k}, remote = {far + at, k};
        ssize_t moved = write ? process_vm_writev(child, &local, 1, &remote, 1, 0)
                              : process_vm_readv(child, &local, 1, &remote, 1, 0);
        if (moved != (ssize_t)k) return -1.0;
      }
    t = (now() - t) / iters;
    if (t < best) best = t;
  }
  return (double)n / best / 1e9;
}

int main(int argc, char **argv) {
  size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 20;
  if (bytes < SMALLEST_PIECE || bytes > ((size_t)1 << 30)) {
    fprintf(stderr, "pccl-cmabench: BYTES must lie between 65536 and 1073741824\n");
    return 2;
  }
  FILE *csv = NULL;
  if (argc > 2 && (csv = fopen(argv[2], "w")) == NULL) {
    perror(argv[2]);
    return 2;
  }
  char *mine = malloc(bytes), *far = malloc(bytes);
  if (!mine || !far) return 1;
  memset(mine, 1, bytes);
  memset(far, 2, bytes); /* touched before the fork: the child's pages exist */
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a parent killed mid-run */
    pin(1);
    for (;;) pause(); /* only lends its memory; killed at the end */
  }
  pin(0);
  printf("# pccl-cmabench: %zu bytes per transfer, this process (core 0) <-> a child (core 1), "
         "GB/s, best of 5 blocks\n%10s %12s %12s\n", bytes, "piece", "readv", "writev");
  if (csv) fprintf(csv, "bytes,piece,readv_gbs,writev_gbs\n");
  int status = 0;
  for (size_t piece = SMALLEST_PIECE; piece <= bytes && !status; piece *= 2) {
    double r = rate(child, mine, far, bytes, piece, 0), w = rate(child, mine, far, bytes, piece, 1);
    if (r < 0 || w < 0) {
      perror("pccl-cmabench: cross-memory attach");
      status = 1;
      break;
    }
    printf("%10zu %12.2f %12.2f\n", piece, r, w);
    if (csv) fprintf(csv, "%zu,%zu,%.3f,%.3f\n", bytes, piece, r, w);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  if (csv) fclose(csv);
  free(mine);
  free(far);
  return status;
}
