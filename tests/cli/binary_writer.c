/* Writing Tipsy and GADGET-2 files for the tests (see binary_writer.h). */
#define _POSIX_C_SOURCE 200809L
#include "binary_writer.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(bytes *o, uint64_t v, int size) {
  if (o->len + (size_t)size > o->cap) {
    o->cap = 2 * o->cap + 4096;
    o->b = realloc(o->b, o->cap);
    cr_assert_not_null(o->b);
  }
  for (int k = 0; k < size; k++)
    o->b[o->len + (size_t)(o->little ? k : size - 1 - k)] =
        (unsigned char)(v >> (8 * k));
  o->len += (size_t)size;
}

void bytes_u32(bytes *o, uint32_t v) { put(o, v, 4); }
void bytes_u64(bytes *o, uint64_t v) { put(o, v, 8); }

void bytes_f32(bytes *o, double v) {
  const float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  put(o, bits, 4);
}

void bytes_f64(bytes *o, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  put(o, bits, 8);
}

void bytes_raw(bytes *o, const void *p, size_t len) {
  for (size_t k = 0; k < len; k++)
    put(o, ((const unsigned char *)p)[k], 1);
}

void bytes_free(bytes *o) {
  free(o->b);
  memset(o, 0, sizeof *o);
}

void bytes_save(bytes *o, const char *path) {
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp, "cannot write %s", path);
  cr_assert_eq(fwrite(o->b, 1, o->len, fp), o->len);
  cr_assert_eq(fclose(fp), 0);
  bytes_free(o);
}

/* splitmix64: a small generator of its own. */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s, double lo, double hi, int single) {
  const double v = lo + (hi - lo) * (double)(next(s) >> 11) * 0x1p-53;
  return single ? (double)(float)v : v;
}

model model_random(const size_t *count, uint64_t seed, int single) {
  model m;
  memset(&m, 0, sizeof m);
  uint64_t s = seed, id = 1000;
  for (int k = 0; k < NTYPES; k++) {
    m.n[k] = count[k];
    m.b[k] = calloc(count[k] + 1, sizeof(body));
    cr_assert_not_null(m.b[k]);
    for (size_t i = 0; i < count[k]; i++) {
      body *b = &m.b[k][i];
      for (int d = 0; d < 3; d++) {
        b->x[d] = uniform(&s, -1, 1, single);
        b->v[d] = uniform(&s, -1, 1, single);
      }
      b->m = uniform(&s, 0.5, 1.5, single);
      b->id = id++;
    }
  }
  return m;
}

void model_free(model *m) {
  for (int k = 0; k < NTYPES; k++)
    free(m->b[k]);
  memset(m, 0, sizeof *m);
}

void model_same_mass(model *m, int k, double mass) {
  for (size_t i = 0; i < m->n[k]; i++)
    m->b[k][i].m = mass;
}

size_t model_write_text(const model *m, unsigned mask, const char *path) {
  FILE *fp = fopen(path, "w");
  cr_assert_not_null(fp);
  size_t n = 0;
  for (int k = 0; k < NTYPES; k++)
    for (size_t i = 0; (mask >> k & 1) && i < m->n[k]; i++, n++) {
      const body *b = &m->b[k][i];
      fprintf(fp, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", b->x[0],
              b->x[1], b->x[2], b->m, b->v[0], b->v[1], b->v[2]);
    }
  cr_assert_eq(fclose(fp), 0);
  return n;
}

/* Tipsy: mass, pos[3], vel[3], then the kind's other floats. */
static void tipsy_body(bytes *o, const body *b, int others) {
  bytes_f32(o, b->m);
  for (int d = 0; d < 3; d++)
    bytes_f32(o, b->x[d]);
  for (int d = 0; d < 3; d++)
    bytes_f32(o, b->v[d]);
  for (int k = 0; k < others; k++)
    bytes_f32(o, 0.01 * (k + 1)); /* rho, temp, eps, phi, ... */
}

void tipsy_write(const model *m, double time, int little, int pad,
                 const char *path) {
  bytes o = {.little = little};
  const size_t gas = m->n[0], dark = m->n[1], star = m->n[4];
  bytes_f64(&o, time);
  bytes_u32(&o, (uint32_t)(gas + dark + star));
  bytes_u32(&o, 3);
  bytes_u32(&o, (uint32_t)gas);
  bytes_u32(&o, (uint32_t)dark);
  bytes_u32(&o, (uint32_t)star);
  if (pad)
    bytes_u32(&o, 0);
  for (size_t i = 0; i < gas; i++)
    tipsy_body(&o, &m->b[0][i], 5); /* rho temp hsmooth metals phi */
  for (size_t i = 0; i < dark; i++)
    tipsy_body(&o, &m->b[1][i], 2); /* eps phi */
  for (size_t i = 0; i < star; i++)
    tipsy_body(&o, &m->b[4][i], 4); /* metals tform eps phi */
  bytes_save(&o, path);
}

gadget_options gadget_defaults(void) {
  gadget_options o;
  memset(&o, 0, sizeof o);
  o.format = 1;
  o.little = 1;
  o.real_width = o.id_width = 4;
  o.num_files = 1;
  return o;
}

/* A record: its length before and after; format 2 names it first.
 * Returns the offset of its data. */
static size_t begin(bytes *o, const gadget_options *g, const char *name,
                    size_t len) {
  if (g->format == 2) {
    bytes_u32(o, 8);
    bytes_raw(o, name, 4);
    bytes_u32(o, (uint32_t)(len + 8));
    bytes_u32(o, 8);
  }
  bytes_u32(o, (uint32_t)len);
  return o->len;
}

static void real(bytes *o, const gadget_options *g, double v) {
  if (g->real_width == 8)
    bytes_f64(o, v);
  else
    bytes_f32(o, v);
}

static void header(bytes *o, const model *m, const gadget_options *g) {
  const size_t start = o->len;
  for (int k = 0; k < NTYPES; k++)
    bytes_u32(o, (uint32_t)m->n[k]);
  for (int k = 0; k < NTYPES; k++)
    bytes_f64(o, g->massarr[k]);
  bytes_f64(o, g->time);
  bytes_f64(o, g->redshift);
  bytes_u32(o, 0); /* flag_sfr */
  bytes_u32(o, 0); /* flag_feedback */
  int given = 0;
  for (int k = 0; k < NTYPES; k++)
    given |= g->total[k] != 0;
  for (int k = 0; k < NTYPES; k++)
    bytes_u32(o, (uint32_t)(given ? g->total[k] : m->n[k]));
  bytes_u32(o, 0); /* flag_cooling */
  bytes_u32(o, (uint32_t)g->num_files);
  bytes_f64(o, 0); /* BoxSize */
  bytes_f64(o, 0); /* Omega0 */
  bytes_f64(o, 0); /* OmegaLambda */
  bytes_f64(o, 1); /* HubbleParam */
  bytes_u32(o, 0); /* flag_stellarage */
  bytes_u32(o, 0); /* flag_metals */
  for (int k = 0; k < NTYPES; k++)
    bytes_u32(o, (uint32_t)((given ? g->total[k] : m->n[k]) >> 32));
  while (o->len - start < 256)
    bytes_raw(o, "", 1); /* flag_entropy_instead_u, fill */
}

void gadget_write(const model *m, const gadget_options *g, const char *path,
                  gadget_layout *where) {
  bytes o = {.little = g->little};
  gadget_layout w;
  memset(&w, 0, sizeof w);
  size_t n = 0, nmass = 0;
  for (int k = 0; k < NTYPES; k++) {
    n += m->n[k];
    nmass += g->massarr[k] == 0 ? m->n[k] : 0;
  }
  const size_t rw = (size_t)g->real_width;
  w.head = begin(&o, g, "HEAD", 256);
  header(&o, m, g);
  bytes_u32(&o, 256);
  w.pos = begin(&o, g, "POS ", 3 * rw * n);
  for (int k = 0; k < NTYPES; k++)
    for (size_t i = 0; i < m->n[k]; i++)
      for (int d = 0; d < 3; d++)
        real(&o, g, m->b[k][i].x[d]);
  bytes_u32(&o, (uint32_t)(3 * rw * n));
  if (!g->no_vel) {
    w.vel = begin(&o, g, "VEL ", 3 * rw * n);
    for (int k = 0; k < NTYPES; k++)
      for (size_t i = 0; i < m->n[k]; i++)
        for (int d = 0; d < 3; d++)
          real(&o, g, m->b[k][i].v[d]);
    bytes_u32(&o, (uint32_t)(3 * rw * n));
  }
  if (!g->no_id) {
    const size_t iw = (size_t)g->id_width;
    w.id = begin(&o, g, "ID  ", iw * n);
    for (int k = 0; k < NTYPES; k++)
      for (size_t i = 0; i < m->n[k]; i++) {
        if (iw == 8)
          bytes_u64(&o, m->b[k][i].id);
        else
          bytes_u32(&o, (uint32_t)m->b[k][i].id);
      }
    bytes_u32(&o, (uint32_t)(iw * n));
  }
  if (nmass > 0) {
    w.mass = begin(&o, g, "MASS", rw * nmass);
    for (int k = 0; k < NTYPES; k++)
      for (size_t i = 0; g->massarr[k] == 0 && i < m->n[k]; i++)
        real(&o, g, m->b[k][i].m);
    bytes_u32(&o, (uint32_t)(rw * nmass));
  }
  if (m->n[0] > 0) { /* gas: block U, which the reader skips */
    const size_t at = begin(&o, g, "U   ", rw * m->n[0]);
    (void)at;
    for (size_t i = 0; i < m->n[0]; i++)
      real(&o, g, 1.5);
    bytes_u32(&o, (uint32_t)(rw * m->n[0]));
  }
  w.size = o.len;
  bytes_save(&o, path);
  if (where != NULL)
    *where = w;
}
