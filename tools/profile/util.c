/* util.c - pccl-profile's small helpers: MPI error checks, a barrier that
 * sleeps (or polls) while it waits, the cost of reading the clock, the
 * median and a least-squares slope. */
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "profile_tool.h"

#define IDLE_SLEEP_NS 1000000L /* between polls of a sleeping barrier */
#define CLOCK_SAMPLES 1001

void prof_die(const char *fmt, ...) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pccl-profile: rank %d: ", rank);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, PROF_EXIT_FAIL);
  exit(PROF_EXIT_FAIL); /* MPI_Abort should not return */
}

void prof_mpi_check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
  prof_die("%s failed: %s", what, msg);
}

void prof_idle_barrier(MPI_Comm comm, int poll) {
  MPI_Request req;
  int done = 0;
  PROF_MPI(MPI_Ibarrier(comm, &req));
  while (!done) {
    PROF_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done || poll) continue;
    struct timespec ts = {0, IDLE_SLEEP_NS};
    nanosleep(&ts, NULL);
  }
}

double prof_clock_overhead(void) {
  double s[CLOCK_SAMPLES];
  for (int i = 0; i < CLOCK_SAMPLES; i++) {
    double t0 = MPI_Wtime();
    s[i] = MPI_Wtime() - t0;
  }
  return prof_median(s, CLOCK_SAMPLES);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double prof_median(double *v, size_t n) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double prof_slope(const double *x, const double *y, size_t n) {
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  if (n < 2) return 0;
  for (size_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  for (size_t i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0;
}
