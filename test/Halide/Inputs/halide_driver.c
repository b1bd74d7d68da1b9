/* A stand-in for ffnc's Halide stub: calls one kernel's AOT pipelines
 * (ffnc-halide-gen) the way the stub does, with halide_buffer_t structs
 * built from the layout it uses (not HalideRuntime.h), and judges every
 * output against a naive double-precision FFN.
 *
 * The kernel is described at compile time, as in its request:
 *   -DNAME=k -DD=60 -DF=84 -DDT=0|1|2 (f32 bf16 f16) -DACT=0..5
 *   (relu gelu gelu_tanh silu sigmoid identity) -DGATED -DBUP -DBGATE
 *   -DBDOWN -DRES -DNORM=0|1|2 (none layernorm rmsnorm) -DPOST -DEPS=1e-5
 *   -DPU=16 -DNR=32 -DMC=64, or -DAUTO for the autoscheduled `whole`
 *   pipeline; -DBUG=1|2 expects drop-last-k-after-row-0 or bias-shift
 *   (some row must fail).
 * Arguments: row counts m; each runs rows [ROW0, ROW0 + m) of coordinate
 * space (ROW0 = 7 unless BUG: nonzero mins everywhere) in blocks of <= MC
 * rows, the panels of each GEMM in up to three unit ranges, as the
 * runtime's threads would split them. Prints one line per m. */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GATED
#define GATED 0
#endif
#ifndef BUP
#define BUP 0
#endif
#ifndef BGATE
#define BGATE 0
#endif
#ifndef BDOWN
#define BDOWN 0
#endif
#ifndef RES
#define RES 0
#endif
#ifndef NORM
#define NORM 0
#endif
#ifndef POST
#define POST 0
#endif
#ifndef EPS
#define EPS 1e-5
#endif
#ifndef PU
#define PU 16
#endif
#ifndef NR
#define NR 32
#endif
#ifndef MC
#define MC 64
#endif
#ifndef BUG
#define BUG 0
#endif
#ifndef AUTO
#define AUTO 0
#endif
#if BUG
#define ROW0 0
#else
#define ROW0 7
#endif
#define PRE (NORM != 0 && !POST)
#define POSTN (NORM != 0 && POST)
#define LAYER (NORM == 1)

/* The struct ffnc's stub fills (HalideBufferLayout.h). */
typedef struct {
  int32_t min, extent, stride;
  uint32_t flags;
} hdim;
typedef struct {
  uint64_t device;
  void *device_interface;
  void *host;
  uint64_t flags;
  uint8_t code, bits;
  uint16_t lanes;
  int32_t dimensions;
  hdim *dim;
  void *padding;
} hbuf;
_Static_assert(sizeof(hbuf) == 56, "halide_buffer_t size");
_Static_assert(offsetof(hbuf, host) == 16, "host");
_Static_assert(offsetof(hbuf, code) == 32, "type");
_Static_assert(offsetof(hbuf, dimensions) == 36, "dimensions");
_Static_assert(offsetof(hbuf, dim) == 40, "dim");
_Static_assert(sizeof(hdim) == 16, "halide_dimension_t size");

#define CAT3(a, b, c) a##b##c
#define SYM2(n, r) CAT3(__ffnh_, n, r)
#define SYM(r) SYM2(NAME, r)

#if AUTO
int SYM(_whole)(hbuf *x, hbuf *w_up,
#if GATED
                hbuf *w_gate,
#endif
                hbuf *w_down,
#if BUP
                hbuf *b_up,
#endif
#if GATED && BGATE
                hbuf *b_gate,
#endif
#if BDOWN
                hbuf *b_down,
#endif
#if NORM
                hbuf *scale,
#endif
#if LAYER
                hbuf *shift,
#endif
                hbuf *y);
#else
#if PRE
int SYM(_norm_in)(hbuf *x, hbuf *scale,
#if LAYER
                  hbuf *shift,
#endif
                  hbuf *a);
#endif
int SYM(_up)(int32_t p0, hbuf *in, hbuf *w_up,
#if GATED
             hbuf *w_gate,
#endif
#if BUP
             hbuf *b_up,
#endif
#if GATED && BGATE
             hbuf *b_gate,
#endif
             hbuf *h);
int SYM(_down)(int32_t p0, hbuf *h, hbuf *w_down,
#if BDOWN
               hbuf *b_down,
#endif
#if RES
               hbuf *x,
#endif
               hbuf *out);
#if POSTN
int SYM(_norm_out)(hbuf *o, hbuf *scale,
#if LAYER
                   hbuf *shift,
#endif
                   hbuf *y);
#endif
int SYM(_pack_w_up)(hbuf *w, hbuf *p);
#if GATED
int SYM(_pack_w_gate)(hbuf *w, hbuf *p);
#endif
int SYM(_pack_w_down)(hbuf *w, hbuf *p);
#endif

/* Storage conversions, round to nearest even (the reference's). */
static double load(const void *p, size_t i) {
#if DT == 0
  return ((const float *)p)[i];
#elif DT == 1
  uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
#else
  return (double)((const _Float16 *)p)[i];
#endif
}
static void store(void *p, size_t i, double v) {
  float f = (float)v;
#if DT == 0
  ((float *)p)[i] = f;
#elif DT == 1
  uint32_t u;
  memcpy(&u, &f, 4);
  ((uint16_t *)p)[i] = (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
#else
  ((_Float16 *)p)[i] = (_Float16)f;
#endif
}
#define ES (DT == 0 ? 4 : 2)

static hbuf make(void *host, int dt, int dims, const int *min,
                 const int *extent, const int *stride, hdim *d) {
  hbuf b;
  memset(&b, 0, sizeof b);
  b.host = host;
  b.code = dt == 1 ? 4 : 2; /* halide_type_bfloat : halide_type_float */
  b.bits = dt == 0 || dt == 3 ? 32 : 16;
  b.lanes = 1;
  b.dimensions = dims;
  b.dim = d;
  for (int i = 0; i < dims; ++i) {
    d[i].min = min[i];
    d[i].extent = extent[i];
    d[i].stride = stride[i];
    d[i].flags = 0;
  }
  return b;
}
#define F32 3 /* make()'s code for the f32 workspace buffers */

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return lo + (hi - lo) * (double)(seed >> 11) * 0x1.0p-53;
}

/* A storage tensor of n values U(lo, hi) and the values as doubles. */
static void *tensor(size_t n, double lo, double hi, double **values) {
  void *p = calloc(n, ES);
  *values = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    store(p, i, uniform(lo, hi));
    (*values)[i] = load(p, i);
  }
  return p;
}

static double act(double v) {
  switch (ACT) {
  case 0:
    return isnan(v) ? v : (v > 0 ? v : 0);
  case 1:
    return 0.5 * v * (1 + erf(v / sqrt(2.0)));
  case 2:
    return 0.5 * v *
           (1 + tanh(sqrt(2 / 3.14159265358979323846) *
                     (v + 0.044715 * v * v * v)));
  case 3:
    return v / (1 + exp(-v));
  case 4:
    return 1 / (1 + exp(-v));
  default:
    return v;
  }
}

static void norm(double *row, const double *scale, const double *shift) {
  double mean = 0, sq = 0;
  if (LAYER) {
    for (int c = 0; c < D; ++c)
      mean += row[c];
    mean /= D;
  }
  for (int c = 0; c < D; ++c)
    sq += (row[c] - mean) * (row[c] - mean);
  double inv = 1 / sqrt(sq / D + EPS);
  for (int c = 0; c < D; ++c)
    row[c] = (row[c] - mean) * inv * scale[c] + (LAYER ? shift[c] : 0);
}

static int ceildiv(int a, int b) { return (a + b - 1) / b; }
static int roundup(int a, int b) { return ceildiv(a, b) * b; }

#define NP_UP (AUTO ? 1 : ceildiv(F, PU))
#define NP_DOWN (AUTO ? 1 : ceildiv(D, NR))
#define A_STRIDE (PRE ? roundup(D, 16) : 0)
#define H_STRIDE (AUTO ? 0 : roundup(NP_UP * PU, 16))
#define O_STRIDE (POSTN ? roundup(NP_DOWN * NR, 16) : 0)

/* The parameters: values (double) and buffers as the stub passes them. */
static double *wu, *wg, *wd, *bu, *bg, *bd, *sc, *sh;
static hdim dWu[2], dWg[2], dWd[2], dBu[1], dBg[1], dBd[1], dSc[1], dSh[1];
static hbuf wUp, wGate, wDown, bUp, bGate, bDown, scale, shift;
#if !AUTO
static hdim dPu[3], dPg[3], dPd[3];
static hbuf pUp, pGate, pDown;
#endif
static const int zero[3] = {0, 0, 0};

static int fail(const char *what) {
  printf("FAIL: %s returned an error\n", what);
  exit(1);
}

/* Rows [row0, row0 + m) of coordinate space, x at X and y at Y (row row0
 * first), in blocks of <= MC rows as the stub calls them. */
static void compute(void *X, void *Y, int m, int row0) {
  float *A = malloc(sizeof(float) * ((size_t)m * A_STRIDE + 1));
  float *H = malloc(sizeof(float) * ((size_t)m * H_STRIDE + 1));
  float *O = malloc(sizeof(float) * ((size_t)m * O_STRIDE + 1));
  (void)A, (void)H, (void)O;
  for (int r0 = 0; r0 < m; r0 += MC) {
    const int rows = r0 + MC < m ? MC : m - r0;
    const int row = row0 + r0; /* the block's first row's coordinate */
    hdim dx[2], dy[2];
    hbuf x = make((char *)X + (size_t)r0 * D * ES, DT, 2, (int[]){0, row},
                  (int[]){D, rows}, (int[]){1, D}, dx);
    hbuf y = make((char *)Y + (size_t)r0 * D * ES, DT, 2, (int[]){0, row},
                  (int[]){D, rows}, (int[]){1, D}, dy);
    (void)x, (void)y;
#if AUTO
    if (SYM(_whole)(&x, &wUp,
#if GATED
                    &wGate,
#endif
                    &wDown,
#if BUP
                    &bUp,
#endif
#if GATED && BGATE
                    &bGate,
#endif
#if BDOWN
                    &bDown,
#endif
#if NORM
                    &scale,
#endif
#if LAYER
                    &shift,
#endif
                    &y))
      fail("whole");
#else
    hdim da[2];
    hbuf a = make(A + (size_t)r0 * A_STRIDE, F32, 2, (int[]){0, row},
                  (int[]){D, rows}, (int[]){1, A_STRIDE}, da);
    (void)a;
#if PRE
    if (SYM(_norm_in)(&x, &scale,
#if LAYER
                      &shift,
#endif
                      &a))
      fail("norm_in");
#endif
    /* Up, over up to three ranges of panels (as threads would split
     * them): h's columns [p0 pu, p1 pu). */
    for (int part = 0; part < 3; ++part) {
      int p0 = NP_UP * part / 3, p1 = NP_UP * (part + 1) / 3;
      if (p0 == p1)
        continue;
      hdim dh[2];
      hbuf h = make(H + (size_t)r0 * H_STRIDE + p0 * PU, F32, 2,
                    (int[]){p0 * PU, row}, (int[]){(p1 - p0) * PU, rows},
                    (int[]){1, H_STRIDE}, dh);
      if (SYM(_up)(p0, PRE ? &a : &x, &pUp,
#if GATED
                   &pGate,
#endif
#if BUP
                   &bUp,
#endif
#if GATED && BGATE
                   &bGate,
#endif
                   &h))
        fail("up");
    }
    /* Down: h whole; its output columns [p0 nr, min(p1 nr, d)) of y, or
     * whole panels of o before a post-norm. */
    for (int part = 0; part < 3; ++part) {
      int p0 = NP_DOWN * part / 3, p1 = NP_DOWN * (part + 1) / 3;
      if (p0 == p1)
        continue;
      hdim dh[2], dout[2];
      hbuf h = make(H + (size_t)r0 * H_STRIDE, F32, 2, (int[]){0, row},
                    (int[]){NP_UP * PU, rows}, (int[]){1, H_STRIDE}, dh);
      int c0 = p0 * NR, c1 = p1 * NR < D ? p1 * NR : D;
      hbuf out = POSTN ? make(O + (size_t)r0 * O_STRIDE + c0, F32, 2,
                              (int[]){c0, row}, (int[]){(p1 - p0) * NR, rows},
                              (int[]){1, O_STRIDE}, dout)
                       : make((char *)Y + ((size_t)r0 * D + c0) * ES, DT, 2,
                              (int[]){c0, row}, (int[]){c1 - c0, rows},
                              (int[]){1, D}, dout);
      if (SYM(_down)(p0, &h, &pDown,
#if BDOWN
                     &bDown,
#endif
#if RES
                     &x,
#endif
                     &out))
        fail("down");
    }
#if POSTN
    hdim dO[2];
    hbuf o = make(O + (size_t)r0 * O_STRIDE, F32, 2, (int[]){0, row},
                  (int[]){NP_DOWN * NR, rows}, (int[]){1, O_STRIDE}, dO);
    if (SYM(_norm_out)(&o, &scale,
#if LAYER
                       &shift,
#endif
                       &y))
      fail("norm_out");
#endif
#endif
  }
  free(A), free(H), free(O);
}

/* The naive FFN in double for row x (d values) into out, and per output
 * the tolerance of an f32 evaluation rounded to the dtype: 2e-5 of the
 * magnitudes summed (after a post-norm: of the row's largest, scaled by
 * the norm), plus half an ulp of the dtype. */
static void reference(const double *xr, double *out, double *tol) {
  double in[D], h[F], mag[D];
  memcpy(in, xr, sizeof in);
  if (PRE)
    norm(in, sc, sh);
  double hmag = 0;
  for (int j = 0; j < F; ++j) {
    double u = BUP ? bu[j] : 0, g = GATED && BGATE ? bg[j] : 0;
    for (int k = 0; k < D; ++k) {
      u += in[k] * wu[(size_t)k * F + j];
      if (GATED)
        g += in[k] * wg[(size_t)k * F + j];
    }
    h[j] = GATED ? act(g) * u : act(u);
    hmag = fmax(hmag, fabs(h[j]));
  }
  double rowMag = 0, mean = 0, sq = 0;
  for (int c = 0; c < D; ++c) {
    out[c] = (BDOWN ? bd[c] : 0) + (RES ? xr[c] : 0);
    mag[c] = fabs(out[c]);
    for (int k = 0; k < F; ++k) {
      double w = wd[(size_t)k * D + c];
      out[c] += h[k] * w;
      mag[c] += fabs(h[k] * w) + hmag * fabs(w) * 1e-6;
    }
    rowMag = fmax(rowMag, mag[c]);
    mean += out[c] / D;
  }
  for (int c = 0; c < D; ++c) {
    double dev = out[c] - (LAYER ? mean : 0);
    sq += dev * dev;
  }
  const double invStd = 1 / sqrt(sq / D + EPS);
  if (POSTN)
    norm(out, sc, sh);
  const double ulp = DT == 0 ? 0x1p-24 : DT == 1 ? 0x1p-8 : 0x1p-11;
  for (int c = 0; c < D; ++c)
    tol[c] = 2e-5 * (POSTN ? rowMag * invStd * fabs(sc[c]) : mag[c]) +
             1.01 * ulp * fabs(out[c]) + (DT == 2 ? 0x1p-25 : 0);
}

int main(int argc, char **argv) {
  /* Logical [in, out] matrices, row-major: Halide (out, in). */
  void *Wu = tensor((size_t)D * F, -0.5, 0.5, &wu);
  void *Wg = GATED ? tensor((size_t)D * F, -0.5, 0.5, &wg) : NULL;
  void *Wd = tensor((size_t)F * D, -0.5, 0.5, &wd);
  void *Bu = BUP ? tensor(F, -0.5, 0.5, &bu) : NULL;
  void *Bg = GATED && BGATE ? tensor(F, -0.5, 0.5, &bg) : NULL;
  void *Bd = BDOWN ? tensor(D, -0.5, 0.5, &bd) : NULL;
  void *Sc = NORM ? tensor(D, 0.5, 1.5, &sc) : NULL;
  void *Sh = LAYER ? tensor(D, -0.5, 0.5, &sh) : NULL;
  wUp = make(Wu, DT, 2, zero, (int[]){F, D}, (int[]){1, F}, dWu);
  wGate = make(Wg, DT, 2, zero, (int[]){F, D}, (int[]){1, F}, dWg);
  wDown = make(Wd, DT, 2, zero, (int[]){D, F}, (int[]){1, D}, dWd);
  bUp = make(Bu, DT, 1, zero, (int[]){F}, (int[]){1}, dBu);
  bGate = make(Bg, DT, 1, zero, (int[]){F}, (int[]){1}, dBg);
  bDown = make(Bd, DT, 1, zero, (int[]){D}, (int[]){1}, dBd);
  scale = make(Sc, DT, 1, zero, (int[]){D}, (int[]){1}, dSc);
  shift = make(Sh, DT, 1, zero, (int[]){D}, (int[]){1}, dSh);

#if !AUTO
  /* Pack: panel-major, zero-padded beyond the real columns. */
  void *Pu = calloc((size_t)NP_UP * D * PU, ES);
  void *Pg = calloc((size_t)NP_UP * D * PU, ES);
  void *Pd = calloc((size_t)NP_DOWN * F * NR, ES);
  pUp =
      make(Pu, DT, 3, zero, (int[]){PU, D, NP_UP}, (int[]){1, PU, PU * D}, dPu);
  pGate =
      make(Pg, DT, 3, zero, (int[]){PU, D, NP_UP}, (int[]){1, PU, PU * D}, dPg);
  pDown = make(Pd, DT, 3, zero, (int[]){NR, F, NP_DOWN}, (int[]){1, NR, NR * F},
               dPd);
  if (SYM(_pack_w_up)(&wUp, &pUp))
    fail("pack_w_up");
#if GATED
  if (SYM(_pack_w_gate)(&wGate, &pGate))
    fail("pack_w_gate");
#endif
  if (SYM(_pack_w_down)(&wDown, &pDown))
    fail("pack_w_down");
  /* The packed layout itself, element by element. */
  for (int q = 0; q < NP_UP; ++q)
    for (int k = 0; k < D; ++k)
      for (int l = 0; l < PU; ++l) {
        int col = q * PU + l;
        double want = col < F ? wu[(size_t)k * F + col] : 0;
        if (load(Pu, ((size_t)q * D + k) * PU + l) != want) {
          printf("FAIL: packed w_up[%d][%d][%d]\n", q, k, l);
          return 1;
        }
      }
  for (int q = 0; q < NP_DOWN; ++q)
    for (int k = 0; k < F; ++k)
      for (int l = 0; l < NR; ++l) {
        int col = q * NR + l;
        double want = col < D ? wd[(size_t)k * D + col] : 0;
        if (load(Pd, ((size_t)q * F + k) * NR + l) != want) {
          printf("FAIL: packed w_down[%d][%d][%d]\n", q, k, l);
          return 1;
        }
      }
#endif

  int failures = 0;
  for (int arg = 1; arg < argc; ++arg) {
    const int m = atoi(argv[arg]);
    double *xv;
    void *X = tensor((size_t)m * D, -1, 1, &xv);
    void *Y = malloc((size_t)m * D * ES);
    void *Y1 = malloc((size_t)D * ES);
    memset(Y, 0xFF, (size_t)m * D * ES); /* NaN: an unwritten output shows */
    compute(X, Y, m, ROW0);

    double worst = 0, badWant = 0, ref[D], tol[D];
    int bad = -1, badCol = -1, variant = -1;
    for (int r = 0; r < m; ++r) {
      reference(xv + (size_t)r * D, ref, tol);
      for (int c = 0; c < D; ++c) {
        double ratio = fabs(load(Y, (size_t)r * D + c) - ref[c]) / tol[c];
        if (!(ratio <= 1) && bad < 0) {
          bad = r;
          badCol = c;
          badWant = ref[c];
        }
        if (!(ratio <= worst))
          worst = ratio;
      }
#if !AUTO
      /* Batch invariance: the row alone (m = 1, its own coordinate) has
       * the same bits as among the others, in whatever row tile. */
      if (variant < 0 && (m <= 17 || r < 2 || r == m / 2 || r == m - 1)) {
        compute((char *)X + (size_t)r * D * ES, Y1, 1, ROW0 + r);
        if (memcmp(Y1, (char *)Y + (size_t)r * D * ES, (size_t)D * ES))
          variant = r;
      }
#endif
    }
    if (bad >= 0 || variant >= 0)
      ++failures;
    if (bad >= 0)
      printf("m=%d: FAIL at row %d column %d: got %.9g, want %.9g (max "
             "err/tol %.3g)\n",
             m, bad, badCol, load(Y, (size_t)bad * D + badCol), badWant, worst);
    else if (variant >= 0)
      printf("m=%d: FAIL: row %d alone differs from row %d of %d\n", m, variant,
             variant, m);
    else
      printf("m=%d: ok, max err/tol %.3f\n", m, worst);
    free(X), free(Y), free(Y1), free(xv);
  }
#if BUG
  return failures ? 0 : 1; /* the deliberate bug must show */
#else
  return failures ? 1 : 0;
#endif
}
