/* The fuzz harness's independent reading (see independent.h). The format
 * is told as docs/formats.md tells it (HDF5's signature, a GADGET-2
 * header record framed by its markers, a consistent Tipsy header, else
 * text); each reader follows the rules that page states, written afresh
 * from it, not from src/io. */
#define _POSIX_C_SOURCE 200809L
#include "independent.h"

#include <hdf5.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { READ = 1, REFUSE = 0, UNSURE = -1 };

static int sane(const indep_bodies *b, size_t from);

/* ---- HDF5 (GADGET/SWIFT layout) ---------------------------------------- */

/* The numbers of attribute name of loc into v: their count, -1 when it
 * is absent, -2 when it cannot be read (nor whether it exists). */
static int attr_doubles(hid_t loc, const char *name, double *v, int cap) {
  const htri_t exists = H5Aexists(loc, name);
  if (exists <= 0)
    return exists < 0 ? -2 : -1;
  const hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t s = a >= 0 ? H5Aget_space(a) : -1;
  const hssize_t k = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
  const int ok = k >= 1 && k <= cap && H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
  if (s >= 0)
    H5Sclose(s);
  if (a >= 0)
    H5Aclose(a);
  return ok ? (int)k : -2;
}

/* Dataset name of group g as n rows of cols, converted to mem; 1 read, 0
 * another shape, -1 absent or unreadable. */
static int dataset(hid_t g, const char *name, hid_t mem, size_t n, int cols,
                   void *out) {
  if (H5Lexists(g, name, H5P_DEFAULT) <= 0)
    return -1;
  const hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
  const hid_t s = d >= 0 ? H5Dget_space(d) : -1;
  hsize_t dims[2] = {0, 0};
  const int rank = s >= 0 ? H5Sget_simple_extent_dims(s, dims, NULL) : -1;
  int r = 0;
  if (rank < 0)
    r = -1;
  else if (dims[0] == n && ((rank == 1 && cols == 1) ||
                            (rank == 2 && dims[1] == (hsize_t)cols) ||
                            (rank == 2 && cols == 1 && dims[1] == 1)))
    r = H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0 ? 1 : -1;
  if (s >= 0)
    H5Sclose(s);
  if (d >= 0)
    H5Dclose(d);
  return r;
}

static int read_hdf5(const char *path, indep_bodies *b) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    return REFUSE; /* libhdf5 cannot open it: nor can the tool */
  int r = UNSURE;
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  double count[6], table[6] = {0}, t = 0, shift[3] = {0, 0, 0}, files = 1;
  if (h < 0 || attr_doubles(h, "NumPart_ThisFile", count, 6) != 6)
    goto done;
  if (attr_doubles(h, "MassTable", table, 6) == -2 ||
      attr_doubles(h, "Time", &t, 1) == -2 ||
      attr_doubles(h, "Shift", shift, 3) == -2 ||
      attr_doubles(h, "NumFilesPerSnapshot", &files, 1) == -2)
    goto done;
  r = REFUSE;
  if (files > 1 || count[1] < 1 || count[1] > INDEP_MAX)
    goto done;
  for (int k = 0; k < 6; k++)
    if (k != 1 && count[k] != 0)
      goto done; /* gas, or several types: refused without --types */
  const size_t n = (size_t)count[1];
  /* Poisoned: a read that succeeds without writing (a chunk its index
   * hides from H5Dread, fill time "never") leaves NaN, refused below. */
  for (size_t k = 0; k < 3 * n; k++)
    b->x[k] = b->v[k] = NAN;
  for (size_t k = 0; k < n; k++)
    b->m[k] = NAN;
  const hid_t g = H5Gopen2(f, "PartType1", H5P_DEFAULT);
  if (g < 0)
    goto done;
  /* Velocities absent: zeros; ParticleIDs absent: 1..n (formats.md). */
  int got = dataset(g, "Coordinates", H5T_NATIVE_DOUBLE, n, 3, b->x), v = 1,
      id = 1;
  if (got == 1 && H5Lexists(g, "Velocities", H5P_DEFAULT) == 0)
    memset(b->v, 0, 3 * n * sizeof *b->v);
  else if (got == 1)
    v = dataset(g, "Velocities", H5T_NATIVE_DOUBLE, n, 3, b->v);
  if (got == 1 && H5Lexists(g, "ParticleIDs", H5P_DEFAULT) == 0)
    for (size_t i = 0; i < n; i++)
      b->id[i] = i + 1;
  else if (got == 1)
    id = dataset(g, "ParticleIDs", H5T_NATIVE_UINT64, n, 1, b->id);
  int mass =
      got < 1 ? got : dataset(g, "Masses", H5T_NATIVE_DOUBLE, n, 1, b->m);
  if (got == 1 && mass == -1 && H5Lexists(g, "Masses", H5P_DEFAULT) == 0 &&
      table[1] > 0) {
    for (size_t i = 0; i < n; i++)
      b->m[i] = table[1];
    mass = 1;
  }
  b->have_vel = v == 1;
  b->have_ids = id == 1;
  H5Gclose(g);
  if (got < 1 || mass < 1)
    goto done; /* absent, unreadable or of another shape: refused */
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      b->x[3 * i + c] -= shift[c];
  b->n = n;
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      b->have_vel &= isfinite(b->v[3 * i + c]);
  if (!b->have_vel)
    memset(b->v, 0, 3 * n * sizeof *b->v);
  if (!sane(b, 0))
    goto done;
  b->time = t;
  r = READ;
done:
  if (h >= 0)
    H5Gclose(h);
  H5Fclose(f);
  return r;
}

/* ---- binary helpers ---------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return NULL;
  size_t cap = 1 << 16, used = 0, got;
  unsigned char *buf = malloc(cap);
  while (buf != NULL && (got = fread(buf + used, 1, cap - used, fp)) > 0) {
    used += got;
    if (used == cap) {
      unsigned char *more = realloc(buf, cap *= 2);
      if (more == NULL)
        free(buf);
      buf = more;
    }
  }
  fclose(fp);
  *len = used;
  return buf;
}

static uint32_t u32(const unsigned char *p, int swap) {
  uint32_t v;
  memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}
static uint64_t u64(const unsigned char *p, int swap) {
  uint64_t v;
  memcpy(&v, p, 8);
  return swap ? __builtin_bswap64(v) : v;
}
static double f64(const unsigned char *p, int swap) {
  const uint64_t u = u64(p, swap);
  double d;
  memcpy(&d, &u, 8);
  return d;
}
static double f32(const unsigned char *p, int swap) {
  const uint32_t u = u32(p, swap);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The bodies' values as docs/formats.md requires them. */
static int sane(const indep_bodies *b, size_t from) {
  for (size_t i = from; i < b->n; i++) {
    if (!isfinite(b->m[i]) || !(b->m[i] > 0))
      return 0;
    for (int c = 0; c < 3; c++)
      if (!isfinite(b->x[3 * i + c]) || !isfinite(b->v[3 * i + c]))
        return 0;
  }
  return 1;
}

/* ---- Tipsy --------------------------------------------------------------- */

/* The byte order in which bytes hold a consistent Tipsy header (0 native,
 * 1 swapped), or -1. */
static int tipsy_order(const unsigned char *bytes, size_t len) {
  for (int swap = 0; len >= 28 && swap < 2; swap++) {
    const int32_t nb = (int32_t)u32(bytes + 8, swap),
                  nd = (int32_t)u32(bytes + 12, swap),
                  ns = (int32_t)u32(bytes + 16, swap),
                  nk = (int32_t)u32(bytes + 20, swap),
                  nt = (int32_t)u32(bytes + 24, swap);
    if (nd == 3 && ns >= 0 && nk >= 0 && nt >= 0 && nb > 0 &&
        (int64_t)ns + nk + nt == nb)
      return swap;
  }
  return -1;
}

static int read_tipsy(const unsigned char *bytes, size_t len, int swap,
                      indep_bodies *b) {
  const int64_t ns = (int32_t)u32(bytes + 16, swap),
                nk = (int32_t)u32(bytes + 20, swap),
                nt = (int32_t)u32(bytes + 24, swap);
  const uint64_t body = (uint64_t)(48 * ns + 36 * nk + 44 * nt);
  const size_t head = len == 28 + body ? 28 : 32;
  if (len < head || len - head != body)
    return REFUSE; /* truncated, or extra bytes */
  if (ns > 0 || (nk > 0 && nt > 0))
    return REFUSE; /* gas, or several types: refused without --types */
  const int64_t n = nk + nt;
  if (n > INDEP_MAX)
    return UNSURE;
  const size_t stride = nk > 0 ? 36 : 44;
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *p = bytes + head + (size_t)i * stride;
    b->m[i] = f32(p, swap);
    for (int c = 0; c < 3; c++) {
      b->x[3 * i + c] = f32(p + 4 + 4 * c, swap);
      b->v[3 * i + c] = f32(p + 16 + 4 * c, swap);
    }
    b->id[i] = (uint64_t)i + 1; /* the place in the file; no gas here */
  }
  b->n = (size_t)n;
  b->time = f64(bytes, swap);
  return sane(b, 0) ? READ : REFUSE;
}

/* ---- GADGET-2, format 1 ------------------------------------------------- */

typedef struct g2head {
  int32_t npart[6], num_files;
  uint32_t total[6], high[6];
  double massarr[6], time, redshift;
} g2head;

static void g2_header(const unsigned char *h, int swap, g2head *g) {
  for (int k = 0; k < 6; k++) {
    g->npart[k] = (int32_t)u32(h + 4 * k, swap);
    g->massarr[k] = f64(h + 24 + 8 * k, swap);
    g->total[k] = u32(h + 96 + 4 * k, swap);
    g->high[k] = u32(h + 168 + 4 * k, swap);
  }
  g->time = f64(h + 72, swap);
  g->redshift = f64(h + 80, swap);
  g->num_files = (int32_t)u32(h + 124, swap);
}

/* The record at *at of bytes: its data and length; 0 when its markers
 * are not whole, differ, or it runs past the end. */
static int record(const unsigned char *bytes, size_t len, size_t *at, int swap,
                  const unsigned char **data, size_t *size) {
  if (*at + 4 > len)
    return 0;
  const size_t l = u32(bytes + *at, swap);
  if (l > len || *at + 8 + l > len || u32(bytes + *at + 4 + l, swap) != l)
    return 0;
  *data = bytes + *at + 4;
  *size = l;
  *at += 8 + l;
  return 1;
}

/* One part's bodies, appended to b (one type: the caller checks it). */
static int g2_part(const unsigned char *bytes, size_t len, int swap,
                   const g2head *g, indep_bodies *b) {
  size_t at = 264, np = 0, nm = 0;
  for (int k = 0; k < 6; k++) {
    if (g->npart[k] < 0)
      return REFUSE;
    np += (size_t)g->npart[k];
    nm += g->massarr[k] == 0 ? (size_t)g->npart[k] : 0;
  }
  if (b->n + np > INDEP_MAX)
    return UNSURE;
  const unsigned char *pos, *vel, *ids, *mass = NULL;
  size_t lp, lv, li, lm = 0;
  if (!record(bytes, len, &at, swap, &pos, &lp) ||
      !record(bytes, len, &at, swap, &vel, &lv) ||
      !record(bytes, len, &at, swap, &ids, &li) ||
      (nm > 0 && !record(bytes, len, &at, swap, &mass, &lm)))
    return REFUSE;
  const int pd = lp == 24 * np, vd = lv == 24 * np, id8 = li == 8 * np,
            md = lm == 8 * nm;
  if ((lp != 12 * np && !pd) || (lv != 12 * np && !vd) ||
      (li != 4 * np && !id8) || (nm > 0 && lm != 4 * nm && !md))
    return REFUSE;
  size_t i = b->n, j = 0, mi = 0;
  for (int k = 0; k < 6; k++)
    for (int32_t q = 0; q < g->npart[k]; q++, i++, j++) {
      for (int c = 0; c < 3; c++) {
        const size_t e = 3 * j + (size_t)c;
        b->x[3 * i + c] = pd ? f64(pos + 8 * e, swap) : f32(pos + 4 * e, swap);
        b->v[3 * i + c] = vd ? f64(vel + 8 * e, swap) : f32(vel + 4 * e, swap);
      }
      b->id[i] = id8 ? u64(ids + 8 * j, swap) : u32(ids + 4 * j, swap);
      b->m[i] = g->massarr[k] != 0 ? g->massarr[k]
                : md               ? f64(mass + 8 * mi++, swap)
                                   : f32(mass + 4 * mi++, swap);
    }
  b->n = i;
  return READ;
}

/* The header of bytes (format 1: the 256-byte record framed by both
 * markers, in either byte order): 1 and *swap set, or 0. */
static int g2_probe(const unsigned char *bytes, size_t len, int *swap) {
  for (int s = 0; len >= 264 && s < 2; s++)
    if (u32(bytes, s) == 256 && u32(bytes + 260, s) == 256) {
      *swap = s;
      return 1;
    }
  return 0;
}

static int read_gadget2(const char *path, const unsigned char *bytes,
                        size_t len, int swap, indep_bodies *b) {
  g2head g0;
  g2_header(bytes + 4, swap, &g0);
  for (int k = 0; k < 6; k++)
    if (!isfinite(g0.massarr[k]) || g0.massarr[k] < 0 || g0.npart[k] < 0)
      return REFUSE;
  if (g0.redshift != 0)
    return REFUSE; /* cosmological */
  uint64_t total[6], all = 0;
  int types = 0;
  for (int k = 0; k < 6; k++) {
    total[k] = (uint64_t)g0.total[k] | (uint64_t)g0.high[k] << 32;
    all += total[k];
    types += total[k] > 0;
  }
  if (all == 0 || total[0] > 0 || types > 1)
    return REFUSE; /* no bodies, gas, or several types */
  if (g0.num_files <= 1) {
    for (int k = 0; k < 6; k++)
      if ((uint64_t)g0.npart[k] != total[k])
        return REFUSE; /* a part of a larger snapshot */
    const int r = g2_part(bytes, len, swap, &g0, b);
    b->time = g0.time;
    return r == READ && !sane(b, 0) ? REFUSE : r;
  }
  /* Several files: path must be BASE.k; parts BASE.0 .. BASE.(nf-1). */
  const char *dot = strrchr(path, '.');
  if (dot == NULL || dot[1] == '\0' ||
      strspn(dot + 1, "0123456789") != strlen(dot + 1))
    return REFUSE;
  if (g0.num_files > 16)
    return UNSURE;
  uint64_t sum[6] = {0};
  for (int p = 0; p < g0.num_files; p++) {
    char part[4096];
    snprintf(part, sizeof part, "%.*s.%d", (int)(dot - path), path, p);
    size_t plen = 0;
    unsigned char *pb = slurp(part, &plen);
    int ps = 0;
    if (pb == NULL || !g2_probe(pb, plen, &ps)) {
      free(pb);
      return REFUSE;
    }
    g2head g;
    g2_header(pb + 4, ps, &g);
    int agree = g.num_files == g0.num_files && g.time == g0.time &&
                g.redshift == g0.redshift;
    for (int k = 0; k < 6; k++)
      agree = agree && g.massarr[k] == g0.massarr[k] &&
              g.total[k] == g0.total[k] && g.high[k] == g0.high[k] &&
              g.npart[k] >= 0;
    const int r = agree ? g2_part(pb, plen, ps, &g, b) : REFUSE;
    free(pb);
    if (r != READ)
      return r;
    for (int k = 0; k < 6; k++)
      sum[k] += (uint64_t)g.npart[k];
  }
  for (int k = 0; k < 6; k++)
    if (sum[k] != total[k])
      return REFUSE;
  b->time = g0.time;
  return sane(b, 0) ? READ : REFUSE;
}

/* ---- text ------------------------------------------------------------------
 */

static int read_text(const unsigned char *bytes, size_t len, indep_bodies *b) {
  for (size_t k = 0; k < len; k++)
    if (bytes[k] == 0 || (bytes[k] < 32 && !isspace(bytes[k])) ||
        bytes[k] == 127)
      return REFUSE; /* a binary file */
  char *text = malloc(len + 1);
  memcpy(text, bytes, len);
  text[len] = '\0';
  int r = READ;
  b->n = 0;
  for (char *line = text, *next; line != NULL && r == READ; line = next) {
    next = strchr(line, '\n');
    if (next != NULL)
      *next++ = '\0';
    line[strcspn(line, "#")] = '\0';
    double v[8];
    int k = 0;
    for (char *w = strtok(line, " \t\r\v\f"); w != NULL;
         w = strtok(NULL, " \t\r\v\f")) {
      char *end;
      const double d = strtod(w, &end);
      if (*end != '\0' || k == 8) {
        r = REFUSE;
        break;
      }
      v[k++] = d;
    }
    if (r != READ || k == 0)
      continue;
    if ((k != 4 && k != 7) || b->n == INDEP_MAX) {
      r = k != 4 && k != 7 ? REFUSE : UNSURE;
      break;
    }
    const size_t i = b->n++;
    for (int c = 0; c < 3; c++) {
      b->x[3 * i + c] = v[c];
      b->v[3 * i + c] = k == 7 ? v[4 + c] : 0;
    }
    b->m[i] = v[3];
    b->id[i] = i + 1;
  }
  free(text);
  b->time = 0;
  if (r == READ && (b->n == 0 || !sane(b, 0)))
    r = REFUSE;
  return r;
}

/* ---- the reading, in a child ------------------------------------------- */

static int read_any(const char *path, indep_bodies *b) {
  size_t len = 0;
  unsigned char *bytes = slurp(path, &len);
  if (bytes == NULL)
    return UNSURE;
  static const unsigned char sig[8] = {0x89, 'H',  'D',  'F',
                                       '\r', '\n', 0x1a, '\n'};
  int hdf5 = 0, swap = 0, r;
  for (size_t at = 0; at + 8 <= len && !hdf5; at = at ? 2 * at : 512)
    hdf5 = memcmp(bytes + at, sig, 8) == 0;
  memset(b, 0, sizeof *b);
  b->have_vel = b->have_ids = 1;
  if (hdf5)
    r = read_hdf5(path, b);
  else if (g2_probe(bytes, len, &swap))
    r = read_gadget2(path, bytes, len, swap, b);
  else if (len >= 8 && (u32(bytes, 0) == 8 || u32(bytes, 1) == 8) &&
           memcmp(bytes + 4, "HEAD", 4) == 0)
    r = UNSURE; /* GADGET-2 format 2: not read here */
  else if ((swap = tipsy_order(bytes, len)) >= 0)
    r = read_tipsy(bytes, len, swap, b);
  else if (len >= 4 && (u32(bytes, 0) == 256 || u32(bytes, 1) == 256))
    r = REFUSE; /* a GADGET-2 file cut inside its header */
  else
    r = read_text(bytes, len, b);
  free(bytes);
  return r;
}

static int write_all(int fd, const void *p, size_t len) {
  for (size_t done = 0; done < len;) {
    const ssize_t w = write(fd, (const char *)p + done, len - done);
    if (w <= 0)
      return 0;
    done += (size_t)w;
  }
  return 1;
}

static int read_all(int fd, void *p, size_t len) {
  for (size_t done = 0; done < len;) {
    const ssize_t r = read(fd, (char *)p + done, len - done);
    if (r <= 0)
      return 0;
    done += (size_t)r;
  }
  return 1;
}

int independent_read(const char *path, indep_bodies *b) {
  int fds[2];
  if (pipe(fds) != 0)
    return UNSURE;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const struct rlimit cpu = {5, 6};
    setrlimit(RLIMIT_CPU, &cpu);
    const int r = read_any(path, b);
    const int ok = write_all(fds[1], &r, sizeof r) &&
                   (r != READ || write_all(fds[1], b, sizeof *b));
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  int r = UNSURE;
  const int ok = pid > 0 && read_all(fds[0], &r, sizeof r) &&
                 (r != READ || read_all(fds[0], b, sizeof *b));
  close(fds[0]);
  int status = 0;
  if (pid > 0)
    waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return UNSURE; /* this reader crashed or looped */
  return r;
}

/* ---- checks
 * ------------------------------------------------------------------ */

/* The tool's output: lines of 4 numbers after '#' comments. */
static size_t read_forces(const char *path, double *f, size_t cap) {
  FILE *fp = fopen(path, "r");
  if (fp == NULL)
    return 0;
  char line[512];
  size_t n = 0;
  while (n < cap && fgets(line, sizeof line, fp) != NULL) {
    if (line[0] == '#')
      continue;
    double *g = f + 4 * n;
    if (sscanf(line, "%lf %lf %lf %lf", g, g + 1, g + 2, g + 3) != 4)
      break;
    n++;
  }
  fclose(fp);
  return n;
}

int independent_forces_agree(const indep_bodies *b, const char *forces) {
  static double want[4 * INDEP_MAX], got[4 * INDEP_MAX];
  const size_t n = b->n;
  /* a_i = sum_j m_j (x_j - x_i) / r^3, phi_i = -sum_j m_j / r, G = 1 */
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, phi = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i)
        continue;
      const double *xi = b->x + 3 * i, *xj = b->x + 3 * j;
      const double d[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
      const double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      for (int c = 0; c < 3; c++)
        a[c] += b->m[j] * d[c] / (r * r * r);
      phi -= b->m[j] / r;
    }
    memcpy(want + 4 * i, a, sizeof a);
    want[4 * i + 3] = phi;
  }
  if (read_forces(forces, got, INDEP_MAX) != n)
    return 0;
  /* forces computes in the file's units (issue 30): its sums are G times
   * these, G from the units (1 without). Fit the one G that the tool's
   * numbers imply; every value must then agree with G times the sum. */
  double scale = 0, gw = 0, ww = 0;
  for (size_t k = 0; k < 4 * n; k++) {
    scale = fmax(scale, fabs(want[k]));
    if (isfinite(want[k]) && isfinite(got[k]))
      gw += got[k] * want[k], ww += want[k] * want[k];
  }
  const double G = ww > 0 ? gw / ww : 1;
  if (!(G > 0) || !isfinite(G))
    return 0;
  for (size_t k = 0; k < 4 * n; k++) {
    const int both_nan = isnan(want[k]) && isnan(got[k]);
    if (!both_nan && !(fabs(got[k] - G * want[k]) <= 1e-9 * G * scale))
      return 0;
  }
  return 1;
}

static double scale_of(const double *v, size_t n) {
  double s = 0;
  for (size_t k = 0; k < n; k++)
    s = fmax(s, fabs(v[k]));
  return s;
}

static int close_to(const double *a, const double *b, size_t n, double tol) {
  const double s = fmax(scale_of(a, n), scale_of(b, n));
  for (size_t k = 0; k < n; k++)
    if (!(fabs(a[k] - b[k]) <= tol * s))
      return 0;
  return 1;
}

int independent_bodies_agree(const indep_bodies *a, const indep_bodies *b) {
  if (a->n != b->n || a->time != b->time)
    return 0;
  for (size_t i = 0; i < a->n; i++)
    if (a->id[i] != b->id[i])
      return 0;
  return close_to(a->x, b->x, 3 * a->n, 1e-12) &&
         close_to(a->v, b->v, 3 * a->n, 1e-12) &&
         close_to(a->m, b->m, a->n, 1e-15);
}

int independent_write_text(const indep_bodies *b, const char *path) {
  FILE *fp = fopen(path, "w");
  if (fp == NULL)
    return 0;
  for (size_t i = 0; i < b->n; i++) {
    const double *x = b->x + 3 * i, *v = b->v + 3 * i;
    fprintf(fp, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", x[0], x[1], x[2],
            b->m[i], v[0], v[1], v[2]);
  }
  return fclose(fp) == 0;
}

/* ---- parameter files ------------------------------------------------------
 */

static int name_ok(const char *s, size_t len) {
  if (len == 0)
    return 0;
  for (size_t k = 0; k < len; k++)
    if (!isalnum((unsigned char)s[k]) && s[k] != '_')
      return 0;
  return 1;
}

int independent_read_params(const char *path, char words[][512], int cap,
                            int *n) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return UNSURE;
  char line[512], section[128] = "";
  int r = READ;
  *n = 0;
  while (r == READ && fgets(line, sizeof line, fp) != NULL) {
    size_t len = strcspn(line, "\n");
    if (line[len] != '\n' && !feof(fp))
      r = UNSURE; /* a line too long for this reader */
    line[len] = '\0';
    for (size_t k = 0; k < len; k++)
      if ((unsigned char)line[k] < 32 || (unsigned char)line[k] >= 127)
        r = UNSURE; /* tabs, control bytes, UTF-8: left to libyaml */
    /* a comment: '#' at the start or after a space, outside quotes */
    for (int quoted = 0, k = 0; line[k] != '\0'; k++) {
      quoted ^= line[k] == '"';
      if (!quoted && line[k] == '#' && (k == 0 || line[k - 1] == ' ')) {
        line[k] = '\0';
        break;
      }
    }
    len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
      line[--len] = '\0';
    if (r != READ || len == 0)
      continue;
    if (line[0] != ' ') { /* Section: */
      if (line[len - 1] != ':' || !name_ok(line, len - 1))
        r = UNSURE;
      else
        snprintf(section, sizeof section, "%.*s", (int)(len - 1), line);
      continue;
    }
    /* "  key: value", the value plain or in double quotes */
    const char *key = line + strspn(line, " ");
    const char *colon = strstr(key, ": ");
    if (section[0] == '\0' || key - line != 2 || colon == NULL ||
        !name_ok(key, (size_t)(colon - key)) || *n == cap) {
      r = UNSURE;
      continue;
    }
    const char *value = colon + 2 + strspn(colon + 2, " ");
    size_t vlen = strlen(value);
    if (value[0] == '"') {
      if (vlen < 2 || value[vlen - 1] != '"' ||
          memchr(value + 1, '"', vlen - 2) != NULL ||
          memchr(value + 1, '\\', vlen - 2) != NULL) {
        r = UNSURE;
        continue;
      }
      value++;
      vlen -= 2;
    } else if (vlen == 0 || strchr("&*!|>{[%@`'~-?:,", value[0]) != NULL ||
               strstr(value, ": ") != NULL || strcmp(value, "null") == 0) {
      r = UNSURE;
      continue;
    }
    snprintf(words[(*n)++], 512, "%s:%.*s:%.*s", section, (int)(colon - key),
             key, (int)vlen, value);
  }
  fclose(fp);
  return r;
}
