/* test_cuda_runtime.c - pccl's CUDA runtime layer on any machine: with no
 * usable device it must say why and treat every pointer as host memory,
 * without asking CUDA; PCCL_CUDA=0 hides devices; a malformed PCCL_CUDA is
 * refused with a message (exit code and `mode` argument select the case,
 * since the answer is remembered per process). With a device, memory from
 * pccl__gpu_alloc must be recognized as device memory and malloc's not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

static int failed;

static void expect(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  failed += !ok;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "auto";
  int n = pccl__gpu_devices();
  const char *why = pccl__gpu_why_none();
  printf("mode %s: devices %d, why none: '%s'\n", mode, n, why);
  char host[64];
  if (!strcmp(mode, "malformed")) {
    expect(n < 0, "a malformed PCCL_CUDA gives a negative device count");
    expect(strstr(why, "PCCL_CUDA") != NULL, "and names the variable");
  } else if (!strcmp(mode, "off")) {
    expect(n == 0, "PCCL_CUDA=0 hides every device");
    expect(strstr(why, "PCCL_CUDA=0") != NULL, "and says so");
    expect(!pccl__gpu_is_device(host), "a host pointer is host memory");
  } else if (n == 0) {
    expect(why[0] != '\0', "no device: the reason is given");
    expect(!pccl__gpu_is_device(host), "a host pointer is host memory");
    expect(!pccl__gpu_is_device(NULL), "NULL is not device memory");
  } else {
    void *d = NULL, *h = malloc(64);
    expect(n > 0 && why[0] == '\0', "a device, no reason for none");
    expect(pccl__gpu_alloc(&d, 64) == PCCL_OK, "device memory can be allocated");
    expect(pccl__gpu_is_device(d), "device memory is recognized");
    expect(!pccl__gpu_is_device(h) && !pccl__gpu_is_device(host), "heap and stack are host memory");
    pccl__gpu_free(d);
    free(h);
  }
  printf("%d failed\n", failed);
  return failed ? 1 : 0;
}
