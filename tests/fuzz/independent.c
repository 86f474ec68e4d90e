/* The fuzz harness's independent reading (see independent.h): the
 * damaged file read with the HDF5 C API directly, in a child process
 * (libhdf5 may crash on it), and its forces summed pair by pair in
 * double. */
#define _POSIX_C_SOURCE 200809L
#include "independent.h"

#include <hdf5.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_BODIES = 4096 };

/* Reads PartType1's Coordinates and Masses (or MassTable[1]) into x, m;
 * returns the count, or 0. */
static size_t read_bodies(const char *path, double *x, double *m) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    return 0;
  size_t n = 0;
  const hid_t c = H5Dopen2(f, "PartType1/Coordinates", H5P_DEFAULT);
  const hid_t space = c >= 0 ? H5Dget_space(c) : -1;
  hsize_t dims[2] = {0, 0};
  if (space >= 0 && H5Sget_simple_extent_ndims(space) == 2 &&
      H5Sget_simple_extent_dims(space, dims, NULL) == 2 && dims[1] == 3 &&
      dims[0] > 0 && dims[0] <= MAX_BODIES &&
      H5Dread(c, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0)
    n = (size_t)dims[0];
  const hid_t ms = n > 0 && H5Lexists(f, "PartType1/Masses", H5P_DEFAULT) > 0
                       ? H5Dopen2(f, "PartType1/Masses", H5P_DEFAULT)
                       : -1;
  if (n > 0 && ms >= 0) {
    const hid_t mspace = H5Dget_space(ms);
    if (H5Sget_simple_extent_npoints(mspace) != (hssize_t)n ||
        H5Dread(ms, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m) < 0)
      n = 0;
    H5Sclose(mspace);
  } else if (n > 0) {
    double table[64] = {0};
    const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    const hid_t a = h >= 0 ? H5Aopen(h, "MassTable", H5P_DEFAULT) : -1;
    const hid_t as = a >= 0 ? H5Aget_space(a) : -1;
    const hssize_t k = as >= 0 ? H5Sget_simple_extent_npoints(as) : 0;
    if (k < 2 || k > 64 || H5Aread(a, H5T_NATIVE_DOUBLE, table) < 0)
      n = 0;
    for (size_t i = 0; i < n; i++)
      m[i] = table[1];
    if (as >= 0)
      H5Sclose(as);
    if (a >= 0)
      H5Aclose(a);
    if (h >= 0)
      H5Gclose(h);
  }
  if (ms >= 0)
    H5Dclose(ms);
  if (space >= 0)
    H5Sclose(space);
  if (c >= 0)
    H5Dclose(c);
  H5Fclose(f);
  return n;
}

/* Accelerations and potentials, G = 1, no softening: a_i = sum_j m_j
 * (x_j - x_i) / r^3, phi_i = -sum_j m_j / r, in double. */
static void direct(size_t n, const double *x, const double *m, double *f) {
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, phi = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i)
        continue;
      const double d[3] = {x[3 * j] - x[3 * i], x[3 * j + 1] - x[3 * i + 1],
                           x[3 * j + 2] - x[3 * i + 2]};
      const double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      for (int c = 0; c < 3; c++)
        a[c] += m[j] * d[c] / (r * r * r);
      phi -= m[j] / r;
    }
    memcpy(f + 4 * i, a, sizeof a);
    f[4 * i + 3] = phi;
  }
}

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

int independent_forces_agree(const char *file, const char *forces) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const struct rlimit cpu = {5, 6};
    setrlimit(RLIMIT_CPU, &cpu);
    static double x[3 * MAX_BODIES], m[MAX_BODIES], f[4 * MAX_BODIES];
    const size_t n = read_bodies(file, x, m);
    direct(n, x, m, f);
    const int ok = write(fds[1], &n, sizeof n) == (ssize_t)sizeof n &&
                   write(fds[1], f, 4 * n * sizeof(double)) ==
                       (ssize_t)(4 * n * sizeof(double));
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  static double want[4 * MAX_BODIES], got[4 * MAX_BODIES];
  size_t n = 0;
  int ok = pid > 0 && read(fds[0], &n, sizeof n) == (ssize_t)sizeof n &&
           n > 0 && n <= MAX_BODIES;
  for (size_t done = 0, len = 4 * n * sizeof(double); ok && done < len;) {
    const ssize_t r = read(fds[0], (char *)want + done, len - done);
    ok = r > 0;
    done += ok ? (size_t)r : 0;
  }
  close(fds[0]);
  int status = 0;
  if (pid > 0)
    waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1; /* the independent reader could not read it */
  if (read_forces(forces, got, MAX_BODIES) != n)
    return 0;
  double scale = 0;
  for (size_t k = 0; k < 4 * n; k++)
    scale = fmax(scale, fabs(want[k]));
  for (size_t k = 0; k < 4 * n; k++) {
    const int both_nan = isnan(want[k]) && isnan(got[k]);
    if (!both_nan && !(fabs(got[k] - want[k]) <= 1e-9 * scale))
      return 0;
  }
  return 1;
}
