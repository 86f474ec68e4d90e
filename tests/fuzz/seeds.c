/* The seed files of the readers' fuzz harness that tilefmm does not write
 * itself (see seeds.h), made with the HDF5 C API. */
#define _POSIX_C_SOURCE 200809L
#include "seeds.h"

#include <hdf5.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 64, TYPES = 6 };

static int fail(const char *what) {
  fprintf(stderr, "make_seeds: %s failed\n", what);
  return 1;
}

static void put_attr(hid_t loc, const char *name, hid_t type, hid_t mem,
                     hsize_t count, const void *data) {
  const hid_t space =
      count == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, NULL);
  const hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, mem, data);
  H5Aclose(a);
  H5Sclose(space);
}

static hid_t dcpl = H5P_DEFAULT; /* the datasets' creation properties */

static void put_set(hid_t loc, const char *name, hid_t type, hid_t mem,
                    int rank, const hsize_t *dims, const void *data) {
  const hid_t space = H5Screate_simple(rank, dims, NULL);
  const hid_t d =
      H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dwrite(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(d);
  H5Sclose(space);
}

/* A deterministic cloud of bodies in [-1, 1)^3 (a 64-bit LCG). */
static double next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-52 - 1;
}

int fuzz_seed_gadget4(const char *path) {
  const hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0)
    return fail(path);
  /* No modification times: the same bytes every time. */
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  const hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  const uint32_t count[TYPES] = {0, N, 0, 0, 0, 0}, zero[TYPES] = {0};
  const double mass_table[TYPES] = {0}, box = 4, t = 0.5;
  const int32_t files = 1;
  const double ul = 3.085678e21, um = 1.989e43, uv = 1e5;
  put_attr(h, "NumPart_ThisFile", H5T_STD_U32LE, H5T_NATIVE_UINT32, TYPES,
           count);
  put_attr(h, "NumPart_Total", H5T_STD_U32LE, H5T_NATIVE_UINT32, TYPES, count);
  put_attr(h, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT32, TYPES,
           zero);
  put_attr(h, "MassTable", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, TYPES,
           mass_table);
  put_attr(h, "Time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &t);
  put_attr(h, "BoxSize", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &box);
  put_attr(h, "NumFilesPerSnapshot", H5T_STD_I32LE, H5T_NATIVE_INT32, 0,
           &files);
  put_attr(h, "UnitLength_in_cm", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &ul);
  put_attr(h, "UnitMass_in_g", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &um);
  put_attr(h, "UnitVelocity_in_cm_per_s", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0,
           &uv);
  H5Gclose(h);
  const hid_t g = H5Gcreate2(f, "PartType1", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  double pos[N][3], mass[N];
  float vel[N][3];
  uint64_t ids[N], s = 29;
  for (int i = 0; i < N; i++) {
    for (int c = 0; c < 3; c++) {
      pos[i][c] = next(&s);
      vel[i][c] = (float)(0.1 * next(&s));
    }
    mass[i] = 1.0 / N * (1.5 + next(&s));
    ids[i] = 1000 + (uint64_t)i;
  }
  const hsize_t rows[2] = {N, 3}, one = N;
  put_set(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, rows, pos);
  put_set(g, "Velocities", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, rows, vel);
  put_set(g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &one, mass);
  put_set(g, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &one, ids);
  H5Gclose(g);
  H5Pclose(dcpl);
  return H5Fclose(f) < 0 ? fail(path) : 0;
}

/* Copies attribute name of from to to, a string as a variable-length
 * one. */
static herr_t copy_vl(hid_t from, const char *name, const H5A_info_t *info,
                      void *data) {
  (void)info;
  const hid_t to = *(const hid_t *)data;
  const hid_t a = H5Aopen(from, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(a);
  const size_t size = H5Tget_size(type);
  char *text = calloc(size + 1, 1);
  H5Aread(a, type, text);
  const hid_t vl = H5Tcopy(H5T_C_S1);
  H5Tset_size(vl, H5T_VARIABLE);
  H5Tset_cset(vl, H5T_CSET_UTF8);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t b = H5Acreate2(to, name, vl, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(b, vl, &text);
  H5Aclose(b);
  H5Sclose(space);
  H5Tclose(vl);
  H5Tclose(type);
  H5Aclose(a);
  free(text);
  return 0;
}

static herr_t copy_object(hid_t from, const char *name, const H5L_info_t *info,
                          void *data) {
  (void)info;
  const hid_t to = *(const hid_t *)data;
  if (strcmp(name, "Parameters") == 0) {
    const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_attr_creation_order(gcpl,
                               H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    const hid_t g = H5Gcreate2(to, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    const hid_t src = H5Gopen2(from, name, H5P_DEFAULT);
    hsize_t at = 0;
    hid_t dst = g;
    H5Aiterate2(src, H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, copy_vl, &dst);
    H5Gclose(src);
    H5Gclose(g);
    H5Pclose(gcpl);
    return 0;
  }
  return H5Ocopy(from, name, to, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}

int fuzz_seed_vlstrings(const char *path, const char *checkpoint) {
  const hid_t in = H5Fopen(checkpoint, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (in < 0)
    return fail(checkpoint);
  const hid_t out = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t root = H5Gopen2(in, "/", H5P_DEFAULT);
  hid_t to = out;
  const herr_t e =
      H5Literate(root, H5_INDEX_NAME, H5_ITER_INC, NULL, copy_object, &to);
  H5Gclose(root);
  H5Fclose(in);
  return H5Fclose(out) < 0 || e < 0 ? fail(path) : 0;
}

/* ---- tilefmm's other input formats ------------------------------------- */

/* The same bodies as fuzz_seed_gadget4, in float. */
static void bodies(float pos[N][3], float vel[N][3]) {
  uint64_t s = 29;
  for (int i = 0; i < N; i++) {
    for (int c = 0; c < 3; c++) {
      pos[i][c] = (float)next(&s);
      vel[i][c] = (float)(0.1 * next(&s));
    }
    next(&s);
  }
}

int fuzz_seed_tipsy(const char *path) {
  FILE *fp = fopen(path, "wb");
  if (fp == NULL)
    return fail(path);
  /* time; nbodies, ndim, nsph, ndark, nstar, pad: native byte order */
  const double time = 0.5;
  const int32_t head[6] = {N, 3, 0, N, 0, 0};
  int ok = fwrite(&time, sizeof time, 1, fp) == 1 &&
           fwrite(head, sizeof head, 1, fp) == 1;
  float pos[N][3], vel[N][3];
  bodies(pos, vel);
  for (int i = 0; ok && i < N; i++) {
    /* mass, pos[3], vel[3], eps, phi */
    const float p[9] = {1.0f / N,  pos[i][0], pos[i][1], pos[i][2], vel[i][0],
                        vel[i][1], vel[i][2], 0.01f,     0};
    ok = fwrite(p, sizeof p, 1, fp) == 1;
  }
  return fclose(fp) != 0 || !ok ? fail(path) : 0;
}

/* One Fortran record: its length before and after. */
static int record(FILE *fp, const void *data, uint32_t len) {
  return fwrite(&len, 4, 1, fp) == 1 && fwrite(data, 1, len, fp) == len &&
         fwrite(&len, 4, 1, fp) == 1;
}

/* Bodies from..from+count of the seed as one GADGET-2 file of files
 * parts (format 1, masses in massarr). */
static int gadget2_part(const char *path, int from, int count, int files) {
  FILE *fp = fopen(path, "wb");
  if (fp == NULL)
    return fail(path);
  unsigned char header[256] = {0};
  const int32_t npart[6] = {0, count, 0, 0, 0, 0}, nall[6] = {0, N, 0, 0, 0, 0};
  const double massarr[6] = {0, 1.0 / N, 0, 0, 0, 0}, time = 0.5, z = 0;
  const int32_t num_files = files;
  memcpy(header, npart, sizeof npart);
  memcpy(header + 24, massarr, sizeof massarr);
  memcpy(header + 72, &time, sizeof time);
  memcpy(header + 80, &z, sizeof z);
  memcpy(header + 96, nall, sizeof nall);
  memcpy(header + 124, &num_files, sizeof num_files);
  float pos[N][3], vel[N][3];
  bodies(pos, vel);
  uint32_t ids[N];
  for (int i = 0; i < N; i++)
    ids[i] = 1000 + (uint32_t)i;
  const uint32_t rows = (uint32_t)count * 12;
  const int ok = record(fp, header, sizeof header) &&
                 record(fp, pos[from], rows) && record(fp, vel[from], rows) &&
                 record(fp, ids + from, (uint32_t)count * 4);
  return fclose(fp) != 0 || !ok ? fail(path) : 0;
}

int fuzz_seed_gadget2(const char *path) { return gadget2_part(path, 0, N, 1); }

int fuzz_seed_gadget2_parts(const char *base) {
  char path[4096];
  snprintf(path, sizeof path, "%s.0", base);
  if (gadget2_part(path, 0, N / 2, 2) != 0)
    return 1;
  snprintf(path, sizeof path, "%s.1", base);
  return gadget2_part(path, N / 2, N - N / 2, 2);
}

int fuzz_seed_text(const char *path) {
  FILE *fp = fopen(path, "w");
  if (fp == NULL)
    return fail(path);
  float pos[N][3], vel[N][3];
  bodies(pos, vel);
  fprintf(fp, "# x y z m vx vy vz: the fuzz seed's bodies\n");
  for (int i = 0; i < N; i++)
    fprintf(fp, "%.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", pos[i][0], pos[i][1],
            pos[i][2], 1.0 / N, vel[i][0], vel[i][1], vel[i][2]);
  return fclose(fp) != 0 ? fail(path) : 0;
}

int fuzz_seed_params(const char *path) {
  FILE *fp = fopen(path, "w");
  if (fp == NULL)
    return fail(path);
  fprintf(fp, "# A parameter file of tilefmm run (the fuzz seed)\n"
              "TimeIntegration:\n"
              "  dt: 0.01\n"
              "Gravity:\n"
              "  G: 1\n"
              "  eps: 0.02\n"
              "  softening: plummer\n"
              "  method: fmm\n"
              "  theta: 0.6\n"
              "  order: 6\n"
              "  leaf_size: 32\n"
              "Snapshots:\n"
              "  precision: \"double\"\n"
              "Output:\n"
              "  statistics_every: 1  # every step\n");
  return fclose(fp) != 0 ? fail(path) : 0;
}
