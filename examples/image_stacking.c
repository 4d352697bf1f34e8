/* image_stacking.c - image stacking with a compressed all-reduce, after the
 * gZCCL paper's use case: every rank holds its own noisy exposure of one
 * scene, and averaging them (an all-reduce with PCCL_AVG) stacks them into a
 * cleaner image. The stack is computed twice, exactly with pccl_allreduce and
 * with pccl_allreduce_lossy under an error bound relative to the exact
 * stack's value range; the program checks the bound, prints PSNR and NRMSE,
 * and writes stack_exact.png, stack_lossy.png and noisy_rank0.png.
 *
 *   mpirun -np 8 ./image_stacking [-s SIZE] [-b REL] [-o DIR]
 *
 * -s SIZE  image edge in pixels, 8 to 8192 (default 1024)
 * -b REL   error bound relative to the exact stack's range (default 1e-4)
 * -o DIR   existing directory for the PNGs (default .)
 *
 * Exit status: 0 ok, 1 a failed call or the bound exceeded, 2 bad usage. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pccl.h>

#define NOISE_SIGMA 0.2
#define MIN_EDGE 8
#define MAX_EDGE 8192

/* ---- the scene and the noise ---- */

/* 1 inside a disc of radius r around (cx, cy), 0 outside, a soft edge between. */
static double soft_disc(double x, double y, double cx, double cy, double r) {
  double d = sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
  return 0.5 - 0.5 * tanh((d - r) / 0.01);
}

/* The clean scene in [0,1]: a gradient, a plain disc, a disc of rings and a
 * patch of waves. */
static void make_scene(float *img, int n) {
  const double two_pi = 6.283185307179586;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      double x = (i + 0.5) / n, y = (j + 0.5) / n;
      double v = 0.1 + 0.25 * x;
      v += 0.55 * soft_disc(x, y, 0.3, 0.3, 0.18);
      double d = sqrt((x - 0.7) * (x - 0.7) + (y - 0.68) * (y - 0.68));
      v += 0.5 * soft_disc(x, y, 0.7, 0.68, 0.24) * (0.5 + 0.5 * cos(two_pi * d / 0.05));
      double patch = soft_disc(x, y, 0.25, 0.76, 0.17);
      v += 0.3 * patch * sin(two_pi * 6 * x) * sin(two_pi * 6 * y);
      img[(size_t)j * n + i] = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
    }
  }
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* scene + Gaussian noise (Box-Muller), from a stream seeded by the rank. */
static void add_noise(const float *scene, float *out, size_t count, int rank) {
  const double two_pi = 6.283185307179586;
  uint64_t s = 0x5EED0000ull + (uint64_t)rank;
  for (size_t k = 0; k < count; k += 2) {
    double u1 = ((splitmix64(&s) >> 11) + 1) * 0x1p-53; /* (0,1] */
    double u2 = (splitmix64(&s) >> 11) * 0x1p-53;
    double r = NOISE_SIGMA * sqrt(-2.0 * log(u1));
    out[k] = (float)(scene[k] + r * cos(two_pi * u2));
    if (k + 1 < count) out[k + 1] = (float)(scene[k + 1] + r * sin(two_pi * u2));
  }
}

/* ---- accuracy: 20 log10(range / RMSE) and RMSE / range against ref ---- */

typedef struct {
  double max_error, rmse, range, psnr, nrmse;
} metrics_t;

static metrics_t compare(const float *ref, const float *x, size_t count) {
  double lo = ref[0], hi = ref[0], sum_sq = 0, max_error = 0;
  for (size_t k = 0; k < count; k++) {
    double e = fabs((double)x[k] - ref[k]);
    sum_sq += e * e;
    max_error = e > max_error ? e : max_error;
    lo = ref[k] < lo ? ref[k] : lo;
    hi = ref[k] > hi ? ref[k] : hi;
  }
  metrics_t m = {max_error, sqrt(sum_sq / count), hi - lo, 0, 0};
  m.nrmse = m.rmse / m.range;
  m.psnr = -20.0 * log10(m.nrmse);
  return m;
}

/* ---- a minimal PNG writer: 8-bit grayscale, stored (uncompressed) deflate ---- */

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t len) {
  static uint32_t table[256];
  if (!table[1]) {
    for (uint32_t b = 0; b < 256; b++) {
      uint32_t c = b;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[b] = c;
    }
  }
  crc = ~crc;
  for (size_t k = 0; k < len; k++) crc = table[(crc ^ p[k]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

static void put_be32(unsigned char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (24 - 8 * k));
}

/* One chunk: length, type, data, CRC-32 of type and data. */
static int put_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len) {
  unsigned char head[8], tail[4];
  put_be32(head, len);
  memcpy(head + 4, type, 4);
  put_be32(tail, crc32_update(crc32_update(0, head + 4, 4), data, len));
  int ok = fwrite(head, 1, 8, f) == 8;
  ok = ok && (len == 0 || fwrite(data, 1, len, f) == len);
  ok = ok && fwrite(tail, 1, 4, f) == 4;
  return ok ? 0 : -1;
}

/* The IDAT payload: a zlib stream of stored deflate blocks holding the rows,
 * each led by filter type 0, then the Adler-32 of those bytes. */
static unsigned char *zlib_stored(const unsigned char *pix, uint32_t w, uint32_t h, size_t *out_len) {
  size_t raw_len = (size_t)h * (w + 1);
  size_t blocks = raw_len / 65535 + 1;
  *out_len = 2 + blocks * 5 + raw_len + 4;
  unsigned char *out = malloc(*out_len);
  if (!out) return NULL;
  unsigned char *p = out;
  *p++ = 0x78; /* deflate, 32K window */
  *p++ = 0x01; /* no dictionary; header check bits */
  uint32_t a = 1, b = 0;
  size_t done = 0;
  for (size_t blk = 0; blk < blocks; blk++) {
    size_t len = raw_len - done < 65535 ? raw_len - done : 65535;
    *p++ = blk + 1 == blocks; /* BFINAL on the last; BTYPE 00, stored */
    p[0] = (unsigned char)len; /* LEN, then NLEN = ~LEN, little-endian */
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)~len;
    p[3] = (unsigned char)(~len >> 8);
    p += 4;
    for (size_t k = done; k < done + len; k++) {
      size_t row = k / (w + 1), col = k % (w + 1);
      *p = col ? pix[row * w + col - 1] : 0;
      a = (a + *p++) % 65521;
      b = (b + a) % 65521;
    }
    done += len;
  }
  put_be32(p, b << 16 | a);
  return out;
}

/* Writes w x h gray pixels (row-major) to path; 0, or -1 with errno set. */
static int png_write_gray8(const char *path, const unsigned char *pix, uint32_t w, uint32_t h) {
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  size_t idat_len;
  unsigned char *idat = zlib_stored(pix, w, h, &idat_len);
  if (!idat) return -1;
  unsigned char ihdr[13] = {0};
  put_be32(ihdr, w);
  put_be32(ihdr + 4, h);
  ihdr[8] = 8; /* bit depth; colour type 0 (gray), deflate, filter 0, no interlace */
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(signature, 1, 8, f) == 8 && !put_chunk(f, "IHDR", ihdr, 13) &&
           !put_chunk(f, "IDAT", idat, (uint32_t)idat_len) && !put_chunk(f, "IEND", ihdr, 0);
  int saved = errno;
  if (f && fclose(f) != 0) {
    ok = 0;
    saved = errno;
  }
  free(idat);
  errno = saved;
  return ok ? 0 : -1;
}

/* Clamps to [0,1], scales to 0..255 and writes DIR/name. */
static int write_image(const char *dir, const char *name, const float *img, int n) {
  size_t count = (size_t)n * n;
  unsigned char *pix = malloc(count);
  char path[4096];
  if (!pix) return -1;
  for (size_t k = 0; k < count; k++) {
    float v = img[k] < 0 ? 0 : img[k] > 1 ? 1 : img[k];
    pix[k] = (unsigned char)lrintf(v * 255.0f);
  }
  int rc = -1;
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) errno = ENAMETOOLONG;
  else rc = png_write_gray8(path, pix, (uint32_t)n, (uint32_t)n);
  if (rc) fprintf(stderr, "image_stacking: %s/%s: %s\n", dir, name, strerror(errno));
  free(pix);
  return rc;
}

/* ---- options ---- */

typedef struct {
  int edge;
  double rel;
  const char *dir;
} options_t;

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "image_stacking: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  fprintf(stderr, "usage: image_stacking [-s SIZE (%d..%d)] [-b REL (>0)] [-o DIR]\n", MIN_EDGE,
          MAX_EDGE);
  return 2;
}

/* 0, or 2 after a message (from rank 0 only). */
static int parse(int argc, char **argv, options_t *o, int quiet) {
  *o = (options_t){1024, 1e-4, "."};
  for (int i = 1; i < argc; i += 2) {
    const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    char *end;
    errno = 0;
    if (strcmp(opt, "-s") && strcmp(opt, "-b") && strcmp(opt, "-o"))
      return quiet ? 2 : usage("unknown option", opt);
    if (!val) return quiet ? 2 : usage("missing value after", opt);
    if (!strcmp(opt, "-s")) {
      long v = strtol(val, &end, 10);
      if (errno || end == val || *end || v < MIN_EDGE || v > MAX_EDGE)
        return quiet ? 2 : usage("bad size", val);
      o->edge = (int)v;
    } else if (!strcmp(opt, "-b")) {
      double v = strtod(val, &end);
      if (errno || end == val || *end || !(v > 0) || !isfinite(v))
        return quiet ? 2 : usage("bad relative bound", val);
      o->rel = v;
    } else {
      if (!*val) return quiet ? 2 : usage("empty directory", NULL);
      o->dir = val;
    }
  }
  return 0;
}

/* ---- main ---- */

static int failed(const char *what, pccl_status_t st, pccl_comm_t *comm) {
  if (st == PCCL_OK) return 0;
  fprintf(stderr, "image_stacking: %s: %s: %s\n", what, pccl_status_string(st), pccl_last_error(comm));
  return 1;
}

int main(int argc, char **argv) {
  pccl_comm_t *comm;
  if (failed("pccl_comm_create_world", pccl_comm_create_world(&comm), NULL)) return 1;
  int rank, nranks, rc = 1;
  pccl_comm_rank(comm, &rank);
  pccl_comm_size(comm, &nranks);
  options_t o;
  float *scene = NULL, *noisy = NULL, *exact = NULL, *lossy = NULL;
  if (parse(argc, argv, &o, rank != 0)) {
    rc = 2;
    goto done;
  }
  size_t count = (size_t)o.edge * o.edge;
  scene = malloc(count * sizeof *scene);
  noisy = malloc(count * sizeof *noisy);
  exact = malloc(count * sizeof *exact);
  lossy = malloc(count * sizeof *lossy);
  if (!scene || !noisy || !exact || !lossy) {
    fprintf(stderr, "image_stacking: out of memory\n");
    goto done; /* a real program would agree on this across ranks first */
  }
  make_scene(scene, o.edge);
  add_noise(scene, noisy, count, rank);

  /* The exact stack, then the lossy one with the bound taken from its range. */
  if (failed("pccl_allreduce", pccl_allreduce(noisy, exact, count, PCCL_FLOAT32, PCCL_AVG, comm), comm))
    goto done;
  float lo = exact[0], hi = exact[0];
  for (size_t k = 0; k < count; k++) {
    lo = exact[k] < lo ? exact[k] : lo;
    hi = exact[k] > hi ? exact[k] : hi;
  }
  double bound = o.rel * ((double)hi - lo);
  pccl_lossy_t z = PCCL_LOSSY_INIT(bound);
  /* On one machine pccl would run the exact all-reduce (compressing does not
   * pay there); name the compressed algorithm to see its effect anyway. An
   * existing PCCL_ALGO choice for the all-reduce wins. */
  if (getenv("PCCL_ALGO") == NULL &&
      failed("pccl_comm_set_algo", pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, "zring"), comm))
    goto done;
  if (failed("pccl_allreduce_lossy",
             pccl_allreduce_lossy(noisy, lossy, count, PCCL_FLOAT32, PCCL_AVG, &z, comm), comm))
    goto done;
  char algo[64];
  snprintf(algo, sizeof algo, "%s", pccl_comm_last_algo(comm)); /* the next call overwrites it */

  /* The bound holds beyond the rounding of a reduction order (pccl.h): allow
   * that much, nranks roundings of the largest magnitude. Every rank checks. */
  double worst = compare(exact, lossy, count).max_error;
  double slack = nranks * FLT_EPSILON * fmax(fabs(lo), fabs(hi));
  if (failed("pccl_allreduce", pccl_allreduce(&worst, &worst, 1, PCCL_FLOAT64, PCCL_MAX, comm), comm))
    goto done;
  rc = worst <= bound + slack ? 0 : 1;

  if (rank == 0) {
    metrics_t mz = compare(exact, lossy, count), me = compare(scene, exact, count);
    metrics_t ml = compare(scene, lossy, count), mn = compare(scene, noisy, count);
    printf("image stacking: %d ranks, %d x %d float32, noise sigma %.2f\n", nranks, o.edge, o.edge,
           NOISE_SIGMA);
    printf("exact stack range [%.4f, %.4f]; bound %g x range = %.4e\n", lo, hi, o.rel, bound);
    printf("lossy all-reduce (%s): stages %d, stage_bound %.4e, guaranteed %.4e\n", algo, (int)z.stages,
           z.stage_bound, z.guaranteed);
    printf("max |lossy - exact| = %.4e (bound %.4e): %s\n", worst, bound, rc ? "EXCEEDED" : "ok");
    printf("lossy vs exact stack: PSNR %.2f dB, NRMSE %.3e\n", mz.psnr, mz.nrmse);
    printf("against the clean scene: noisy rank 0 PSNR %.2f dB, exact stack %.2f dB, lossy stack %.2f dB\n",
           mn.psnr, me.psnr, ml.psnr);
    if (write_image(o.dir, "stack_exact.png", exact, o.edge) ||
        write_image(o.dir, "stack_lossy.png", lossy, o.edge) ||
        write_image(o.dir, "noisy_rank0.png", noisy, o.edge))
      rc = 1;
    else
      printf("wrote %s/{stack_exact,stack_lossy,noisy_rank0}.png\n", o.dir);
  }

done:
  free(scene);
  free(noisy);
  free(exact);
  free(lossy);
  pccl_comm_destroy(comm);
  pccl_finalize();
  return rc;
}
