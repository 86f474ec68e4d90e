#include "near_check.h"
#include "accuracy.h"

#include "tree/lists.h"
#include "tree/octree.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_ROUNDOFF 0x1p-24

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

/* Sums of one target body over its list. */
typedef struct body_sums {
  double a[3], phi, s, p, q_acc, q_pot, k;
} body_sums;

/* Body i (sorted) of leaf T against the bodies of source leaf S. */
static void sum_pairs(const tfmm_octree *t, const tfmm_cell *T,
                      const tfmm_cell *S, int64_t i, double eps2,
                      body_sums *o) {
  const double *xi = t->pos + 3 * i;
  const double rho = T->radius + S->radius;
  for (int64_t j = S->body_begin; j < S->body_end; j++) {
    if (j == i)
      continue;
    double d[3], r2 = 0;
    for (int k = 0; k < 3; k++) {
      d[k] = t->pos[3 * j + k] - xi[k];
      r2 += d[k] * d[k];
    }
    const double D = r2 + eps2, m = t->mass[j];
    const double inv = 1 / sqrt(D), inv3 = inv * inv * inv;
    for (int k = 0; k < 3; k++)
      o->a[k] += m * d[k] * inv3;
    o->phi -= m * inv;
    o->s += m * sqrt(r2) * inv3;
    o->p += m * inv;
    o->q_acc += m * rho * inv3;
    o->q_pot += m * rho * inv * inv;
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
  tfmm_accuracy_resolve(cfg, &set);
  cr_assert_eq(cfg->mac, TFMM_MAC_GEOMETRIC, "the truth's lists are geometric");
  const tfmm_mac mac = {set.theta, set.separation, NULL};
  tfmm_status st = cfg->method == TFMM_METHOD_FMM
                       ? tfmm_lists_build_fmm(&t, &mac, 1, &l, &err)
                       : tfmm_lists_build_bh(&t, &mac, &l, &err);
  cr_assert_eq(st, TFMM_OK, "%s", err.message);
  cr_assert_eq(l.near.ntargets, t.nleaves);
  near_truth nt = {.interactions = l.near_interactions, .leaves = t.nleaves};
  alloc_truth(&nt, b->n);
  const double eps2 = cfg->eps * cfg->eps, G = cfg->G, u = UNIT_ROUNDOFF;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t leaf = 0; leaf < t.nleaves; leaf++) {
    const tfmm_cell *T = &t.cells[t.leaves[leaf]];
    for (int64_t i = T->body_begin; i < T->body_end; i++) {
      body_sums o;
      memset(&o, 0, sizeof o);
      for (int64_t e = l.near.offset[leaf]; e < l.near.offset[leaf + 1]; e++)
        sum_pairs(&t, T, &t.cells[l.near.index[e]], i, eps2, &o);
      const int64_t in = t.order[i];
      for (int k = 0; k < 3; k++)
        nt.acc[3 * in + k] = G * o.a[k];
      nt.pot[in] = G * o.phi;
      nt.mag_acc[in] = G * o.s;
      nt.mag_pot[in] = G * o.p;
      nt.bound_acc[in] = G * u * ((36 + 4 * sqrt(o.k)) * o.s + 16 * o.q_acc);
      nt.bound_pot[in] = G * u * ((16 + 4 * sqrt(o.k)) * o.p + 6 * o.q_pot);
    }
  }
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
