#include "near_check.h"
#include "accuracy.h"
#include "plan.h"

#include "nearfield/near_frame.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_ROUNDOFF 0x1p-24     /* float */
#define UNIT_ROUNDOFF_F64 0x1p-53 /* double */

test_bodies near_bodies_make(size_t n, int plummer, uint64_t seed) {
  if (!plummer)
    return test_bodies_make(n, TEST_UNIFORM, seed);
  test_bodies b = {n, malloc(3 * n * sizeof(double)),
                   malloc(n * sizeof(double))};
  double *vel = malloc(3 * n * sizeof(double));
  cr_assert(b.pos && b.mass && vel);
  cr_assert_eq(tfmm_ic_plummer(n, seed, b.pos, vel, b.mass), TFMM_OK);
  free(vel);
  return b;
}

/* Sums of one target body over its list: the pulls and potentials (in
 * long double), and the magnitudes the bound is made of (near_check.h). */
typedef struct body_sums {
  long double a[3], phi;
  double s, p, q_acc, q_pot, e_acc, e_pot, k;
} body_sums;

/* The kernel a unit mass at distance r applies: pull a = r_vec g(r) and
 * potential phi(r). */
typedef struct kernel_value {
  long double g, phi;
  double g_max;    /* bounds |d(r_vec g) / dr| / 3 near r */
  double dphi;     /* bounds |dphi / dr| near r */
  double e_g, e_p; /* the spline's polynomial, summed in absolute value:
                      what its cancellation may cost (0 outside h) */
} kernel_value;

/* Fraction of the cubic spline's mass inside u = r / h (Monaghan &
 * Lattanzio 1985; Springel 2005, eq. 4), integrated here from the
 * density 8 / pi (1 - 6 u^2 + 6 u^3) (u < 1/2), 16 / pi (1 - u)^3
 * (u < 1), times 4 pi u^2, written apart from nearfield/interaction.h.
 * Over u^3 (the pull factor in units of 1/h^3) below 1/2, where r may be
 * zero. */
static long double spline_mass_over_u3(long double u) {
  return 32 * (1.0L / 3 - 6.0L / 5 * u * u + u * u * u);
}

static long double spline_mass(long double u) {
  if (u < 0.5L)
    return u * u * u * spline_mass_over_u3(u);
    /* 19/30 inside u = 1/2, then 64 times the integral of s^2 (1 - s)^3. */
#define OUTER_MASS(s)                                                          \
  ((s) * (s) * (s) *                                                           \
   (1.0L / 3 + (s) * (-3.0L / 4 + (s) * (3.0L / 5 - (s) / 6.0L))))
  return 19.0L / 30 + 64 * (OUTER_MASS(u) - OUTER_MASS(0.5L));
#undef OUTER_MASS
}

/* 4 pi times the integral of the density times v from u to 1, in units of
 * 1/h: the potential of the shells outside u. */
static long double spline_shells(long double u) {
#define INNER(v) ((v) * (v) * (0.5L + (v) * (v) * (-1.5L + 1.2L * (v))))
#define OUTER(v) ((v) * (v) * (0.5L + (v) * (-1 + (v) * (0.75L - (v) / 5))))
  const long double outer = 64 * (OUTER(1.0L) - OUTER(u < 0.5L ? 0.5L : u));
  return u < 0.5L ? 32 * (INNER(0.5L) - INNER(u)) + outer : outer;
#undef INNER
#undef OUTER
}

static kernel_value kernel_at(long double r2, const tfmm_config *cfg) {
  kernel_value v = {0};
  const long double eps = cfg->eps, r = sqrtl(r2);
  if (cfg->softening == TFMM_SOFTENING_PLUMMER || r >= 2.8L * eps) {
    const long double D = cfg->softening == TFMM_SOFTENING_PLUMMER
                              ? r2 + eps * eps
                              : r2,
                      inv = 1 / sqrtl(D);
    v.g = inv * inv * inv;
    v.phi = -inv;
    v.g_max = (double)v.g;
    v.dphi = (double)(inv * inv);
    return v;
  }
  /* Inside the support h = 2.8 eps: g = M(u) / r^3, and phi the potential
   * of the mass inside r plus that of the shells outside it. */
  const long double h = 2.8L * eps, q = 1 / h, u = r * q;
  v.g =
      u < 0.5L ? q * q * q * spline_mass_over_u3(u) : spline_mass(u) / (r2 * r);
  v.phi =
      -q * ((u < 0.5L ? u * u * spline_mass_over_u3(u) : spline_mass(u) / u) +
            spline_shells(u));
  /* The pull factor is at most 32/3 q^3 (its value at r = 0), its
   * derivative's share within 3 g_max; phi' = -r g <= 11 q^2. */
  const double qd = (double)q, cap3 = 11 * qd * qd * qd, cap2 = 11 * qd * qd;
  v.g_max = r2 > 0 && 1 / (double)(r2 * r) < cap3 ? 1 / (double)(r2 * r) : cap3;
  v.dphi = r2 > 0 && 1 / (double)r2 < cap2 ? 1 / (double)r2 : cap2;
  /* The library's polynomials (Springel 2005) in u, coefficients summed in
   * absolute value: 118.5 for g, 41.7 for phi (in q^3 and q). */
  v.e_g = 118.5 * qd * qd * qd;
  v.e_p = 41.7 * qd;
  return v;
}

/* The radius of a leaf about the origin its bodies are rounded from: the
 * centre of mass in double precision, its bodies' box (near_frame.h,
 * whose corners are sqrt(3) reach away) in single. */
static double leaf_rho(const tfmm_cell *c, const tfmm_near_frame *f) {
  return f != NULL ? fmax(c->radius, sqrt(3.0) * f->reach) : c->radius;
}

/* Body i (sorted) of leaf T against the bodies of source leaf S (frames
 * fT and fS, or NULL in double precision). */
static void sum_pairs(const tfmm_octree *t, const tfmm_cell *T,
                      const tfmm_cell *S, const tfmm_near_frame *fT,
                      const tfmm_near_frame *fS, int64_t i,
                      const tfmm_config *cfg, body_sums *o) {
  const double *xi = t->pos + 3 * i;
  const double rho = leaf_rho(T, fT) + leaf_rho(S, fS);
  for (int64_t j = S->body_begin; j < S->body_end; j++) {
    if (j == i)
      continue;
    long double d[3], r2 = 0;
    for (int k = 0; k < 3; k++) {
      d[k] = (long double)t->pos[3 * j + k] - xi[k];
      r2 += d[k] * d[k];
    }
    const kernel_value v = kernel_at(r2, cfg);
    const double m = t->mass[j], r = (double)sqrtl(r2);
    for (int k = 0; k < 3; k++)
      o->a[k] += m * d[k] * v.g;
    o->phi += m * v.phi;
    o->s += m * r * (double)v.g;
    o->p += m * (double)-v.phi;
    o->q_acc += m * rho * v.g_max;
    o->q_pot += m * rho * v.dphi;
    o->e_acc += m * r * v.e_g;
    o->e_pot += m * v.e_p;
    o->k += 1;
  }
}

static void alloc_truth(near_truth *nt, size_t n) {
  nt->n = n;
  nt->acc = malloc(3 * n * sizeof(double));
  nt->pot = malloc(n * sizeof(double));
  nt->bound_acc = malloc(n * sizeof(double));
  nt->bound_pot = malloc(n * sizeof(double));
  nt->mag_acc = malloc(n * sizeof(double));
  nt->mag_pot = malloc(n * sizeof(double));
  cr_assert(nt->acc && nt->pot && nt->bound_acc && nt->bound_pot &&
            nt->mag_acc && nt->mag_pot);
}

near_truth near_truth_make(const test_bodies *b, const tfmm_config *cfg) {
  cr_assert(cfg->method == TFMM_METHOD_FMM || cfg->method == TFMM_METHOD_BH);
  cr_assert_geq(cfg->leaf_size, 1, "the truth needs an explicit leaf size");
  tfmm_octree t;
  tfmm_lists l;
  tfmm_error err = {{0}};
  cr_assert_eq(tfmm_octree_build(&t, b->n, b->pos, b->mass, cfg->leaf_size,
                                 cfg->max_depth, &err),
               TFMM_OK, "%s", err.message);
  tfmm_resolved set;
  tfmm_accuracy_resolve(cfg, tfmm_plan_far_kernel(cfg, 0, b->n, cfg->eps),
                        cfg->leaf_size, 0, &set);
  cr_assert_eq(cfg->mac, TFMM_MAC_GEOMETRIC, "the truth's lists are geometric");
  const tfmm_mac mac = {.theta = set.theta, .separation = set.separation};
  tfmm_status st = cfg->method == TFMM_METHOD_FMM
                       ? tfmm_lists_build_fmm(&t, &mac, 1, &l, &err)
                       : tfmm_lists_build_bh(&t, &mac, &l, &err);
  cr_assert_eq(st, TFMM_OK, "%s", err.message);
  cr_assert_eq(l.near.ntargets, t.nleaves);
  near_truth nt = {.interactions = l.near_interactions, .leaves = t.nleaves};
  /* The single-precision near field's frames (its leaves run in double
   * only where that is more accurate: the bound still holds there). */
  tfmm_near_frame *frame = NULL;
  unsigned char *exact = NULL;
  if (cfg->precision != TFMM_PRECISION_DOUBLE) {
    frame = malloc((size_t)t.ncells * sizeof *frame);
    exact = malloc((size_t)t.nleaves + 1);
    cr_assert(frame && exact);
    tfmm_near_frames(&t, &l.near, cfg->eps, frame, exact);
  }
  alloc_truth(&nt, b->n);
  const double G = cfg->G, u = cfg->precision == TFMM_PRECISION_DOUBLE
                                   ? UNIT_ROUNDOFF_F64
                                   : UNIT_ROUNDOFF;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t leaf = 0; leaf < t.nleaves; leaf++) {
    const tfmm_cell *T = &t.cells[t.leaves[leaf]];
    for (int64_t i = T->body_begin; i < T->body_end; i++) {
      body_sums o;
      memset(&o, 0, sizeof o);
      for (int64_t e = l.near.offset[leaf]; e < l.near.offset[leaf + 1]; e++) {
        const int32_t c = l.near.index[e];
        sum_pairs(&t, T, &t.cells[c], frame ? &frame[t.leaves[leaf]] : NULL,
                  frame ? &frame[c] : NULL, i, cfg, &o);
      }
      const int64_t in = t.order[i];
      for (int k = 0; k < 3; k++)
        nt.acc[3 * in + k] = G * (double)o.a[k];
      nt.pot[in] = G * (double)o.phi;
      nt.mag_acc[in] = G * o.s;
      nt.mag_pot[in] = G * o.p;
      nt.bound_acc[in] =
          G * u * ((36 + 4 * sqrt(o.k)) * o.s + 16 * o.q_acc + 8 * o.e_acc);
      nt.bound_pot[in] =
          G * u * ((16 + 4 * sqrt(o.k)) * o.p + 6 * o.q_pot + 8 * o.e_pot);
    }
  }
  free(frame);
  free(exact);
  tfmm_lists_free(&l);
  tfmm_octree_free(&t);
  return nt;
}

void near_truth_free(near_truth *t) {
  free(t->acc);
  free(t->pot);
  free(t->bound_acc);
  free(t->bound_pot);
  free(t->mag_acc);
  free(t->mag_pot);
  memset(t, 0, sizeof *t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* 99th percentile (nearest rank) of x[0..n), which it sorts. */
static double p99_of(double *x, size_t n) {
  qsort(x, n, sizeof *x, cmp_double);
  size_t rank = (size_t)ceil(0.99 * (double)n);
  return x[rank > 0 ? rank - 1 : 0];
}

/* |e| / (factor * bound), with 0 / 0 = 0: a body with no list pairs must
 * come out exactly zero. Non-finite e gives infinity. */
static double ratio(double e, double bound, double factor) {
  if (!isfinite(e))
    return INFINITY;
  if (e == 0)
    return 0;
  return bound > 0 ? e / (factor * bound) : INFINITY;
}

near_diff near_diff_of(size_t n, const double *acc, const double *pot,
                       const double *acc_ref, const double *pot_ref,
                       const double *bound_acc, const double *bound_pot,
                       double factor) {
  near_diff d = {0};
  double *ra = malloc(n * sizeof *ra), *rp = malloc(n * sizeof *rp);
  cr_assert(ra && rp);
  for (size_t i = 0; i < n; i++) {
    double e = 0, r = 0;
    for (int k = 0; k < 3; k++) {
      double x = acc[3 * i + k] - acc_ref[3 * i + k];
      e += x * x;
      r += acc_ref[3 * i + k] * acc_ref[3 * i + k];
    }
    e = sqrt(e);
    r = sqrt(r);
    ra[i] = isfinite(e) ? (r > 0 ? e / r : e) : INFINITY;
    double q = ratio(e, bound_acc[i], factor);
    if (q > d.acc_ratio || i == 0)
      d.acc_ratio = q, d.acc_worst = i;
    if (pot != NULL) {
      double ep = fabs(pot[i] - pot_ref[i]);
      rp[i] = isfinite(ep) ? (pot_ref[i] != 0 ? ep / fabs(pot_ref[i]) : ep)
                           : INFINITY;
      q = ratio(ep, bound_pot[i], factor);
      if (q > d.pot_ratio || i == 0)
        d.pot_ratio = q, d.pot_worst = i;
    } else {
      rp[i] = 0;
    }
  }
  if (n > 0) {
    d.acc_p99 = p99_of(ra, n);
    d.acc_max = ra[n - 1];
    d.pot_p99 = p99_of(rp, n);
    d.pot_max = rp[n - 1];
  }
  free(ra);
  free(rp);
  return d;
}

void near_diff_assert(const near_diff *d, double p99, const char *what) {
  cr_assert_leq(d->acc_ratio, 1.0,
                "%s: body %zu acceleration off by %.3g of its bound (p99 "
                "%.3g, max relative %.3g)",
                what, d->acc_worst, d->acc_ratio, d->acc_p99, d->acc_max);
  cr_assert_leq(d->pot_ratio, 1.0,
                "%s: body %zu potential off by %.3g of its bound (p99 %.3g, "
                "max relative %.3g)",
                what, d->pot_worst, d->pot_ratio, d->pot_p99, d->pot_max);
  cr_assert_leq(d->acc_p99, p99, "%s: acceleration p99 %.3g > %.3g", what,
                d->acc_p99, p99);
  cr_assert_leq(d->pot_p99, p99, "%s: potential p99 %.3g > %.3g", what,
                d->pot_p99, p99);
}

double near_acc_p99(size_t n, const double *acc, const double *acc_ref) {
  double *ones = malloc(n * sizeof *ones);
  cr_assert(ones);
  for (size_t i = 0; i < n; i++)
    ones[i] = 1;
  near_diff d = near_diff_of(n, acc, NULL, acc_ref, NULL, ones, NULL, 1);
  free(ones);
  return d.acc_p99;
}
