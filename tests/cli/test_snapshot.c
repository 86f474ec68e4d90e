/* Snapshots (apps/snapshot.c, snapshot_read.c): bit-exact round trips,
 * files in the layout other codes write, and what h5py sees in ours. The
 * refusals and the atomic writes are in test_snapshot_bad.c. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TestSuite(snapshot, .init = scratch_make, .fini = scratch_remove);

static void round_trip(size_t n, uint64_t seed, int extras) {
  snapshot s = random_snapshot(n, seed, extras), back;
  const char *path = sp("snap.h5");
  cr_assert_eq(snapshot_write(path, &s), 1, "%s", errors());
  cr_assert_eq(snapshot_read(path, &back), 1, "%s", errors());
  assert_same_snapshot(&s, &back);
  cr_assert_eq(back.nstate, extras ? 3u : 0u);
  snapshot_free(&back);
  snapshot_free(&s);
  assert_no_temporaries();
}

Test(snapshot, round_trip_one_body) { round_trip(1, 11, 1); }

Test(snapshot, round_trip_without_optional_arrays) {
  round_trip(17, 12, 0); /* acc, pot NULL; no /RunState */
}

Test(snapshot, round_trip_many_bodies) { round_trip(300000, 13, 1); }

Test(snapshot, replaces_an_existing_file) {
  write_text("snap.h5", PRECIOUS);
  round_trip(5, 14, 1);
}

Test(snapshot, recognises_hdf5) {
  snapshot s = random_snapshot(3, 15, 0);
  cr_assert_eq(snapshot_write(sp("snap.h5"), &s), 1, "%s", errors());
  write_text("text.txt", "\x89HDF\r\n\x1a"); /* one byte short */
  cr_assert_eq(snapshot_is_hdf5(sp("snap.h5")), 1);
  cr_assert_eq(snapshot_is_hdf5(sp("text.txt")), 0);
  cr_assert_eq(snapshot_is_hdf5(sp("missing.h5")), 0);
  cr_assert_str_eq(snapshot_attr_find(s.params, s.nparams, "Gravity:key1"),
                   s.params[11].value);
  cr_assert_null(snapshot_attr_find(s.params, s.nparams, "Gravity:key"));
  snapshot_free(&s);
}

/* A file as GADGET-2 writes it: float coordinates, uint32 IDs, masses in
 * MassTable, types 1 and 3 (made in reverse order), no Velocities in type
 * 3, Potentials in type 3 only, numbers and fixed-length strings among
 * the parameters, no /RunState. */
static void make_gadget_file(const char *path) {
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  cr_assert_geq(file, 0);
  const hid_t header =
      H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const unsigned count[6] = {0, 3, 0, 2, 0, 0}, high[6] = {0};
  const double mass_table[6] = {0, 0.5, 0, 0.25, 0, 0}, time = 0.125;
  const int files = 1;
  const hid_t u32 = H5T_NATIVE_UINT;
  h5_attr(header, "NumPart_ThisFile", u32, u32, 6, count);
  h5_attr(header, "NumPart_Total", u32, u32, 6, count);
  h5_attr(header, "NumPart_Total_HighWord", u32, u32, 6, high);
  h5_attr(header, "MassTable", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, 6,
          mass_table);
  h5_attr(header, "Time", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, 0, &time);
  h5_attr(header, "NumFilesPerSnapshot", H5T_NATIVE_INT, H5T_NATIVE_INT, 0,
          &files);
  H5Gclose(header);

  const float x3[6] = {-1.5f, 2.25f, 1e-3f, 4, 5, 6};
  const unsigned id3[2] = {20, 21};
  const double pot3[2] = {-1, -2};
  const size_t d23[2] = {2, 3}, d2[1] = {2};
  const hid_t t3 =
      H5Gcreate2(file, "PartType3", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  h5_dataset(t3, "Coordinates", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d23, x3);
  h5_dataset(t3, "ParticleIDs", H5T_STD_U32LE, u32, 1, d2, id3);
  h5_dataset(t3, "Potentials", H5T_IEEE_F32LE, H5T_NATIVE_DOUBLE, 1, d2, pot3);
  H5Gclose(t3);

  const float x1[9] = {0.1f, 0.2f, 0.3f, 1, 2, 3, -7, -8, -9};
  const float v1[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const unsigned id1[3] = {10, 11, 12};
  const size_t d33[2] = {3, 3}, d3[1] = {3};
  const hid_t t1 =
      H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  h5_dataset(t1, "Coordinates", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d33, x1);
  h5_dataset(t1, "Velocities", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, d33, v1);
  h5_dataset(t1, "ParticleIDs", H5T_STD_U32LE, u32, 1, d3, id1);
  H5Gclose(t1);

  const hid_t par =
      H5Gcreate2(file, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t nullterm = H5Tcopy(H5T_C_S1), spacepad = H5Tcopy(H5T_C_S1);
  H5Tset_size(nullterm, 8);
  H5Tset_size(spacepad, 4);
  H5Tset_strpad(spacepad, H5T_STR_SPACEPAD);
  const double theta = 0.1;
  const int pair[2] = {1, -2};
  h5_attr(par, "Gamma", H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, 0, &theta);
  h5_attr(par, "Alpha", nullterm, nullterm, 0, "abc\0\0\0\0\0");
  h5_attr(par, "Delta", H5T_STD_I32LE, H5T_NATIVE_INT, 2, pair);
  h5_attr(par, "Beta", spacepad, spacepad, 0, "x   ");
  H5Tclose(nullterm);
  H5Tclose(spacepad);
  H5Gclose(par);
  h5_close(file);
}

Test(snapshot, reads_gadget_files) {
  make_gadget_file(sp("gadget.h5"));
  snapshot s;
  cr_assert_eq(snapshot_read(sp("gadget.h5"), &s), 1, "%s", errors());
  cr_assert_eq(s.n, 5);
  cr_assert_eq(s.time, 0.125);
  const double pos[15] = {0.1f, 0.2f,  0.3f,  1,     2, 3, -7, -8,
                          -9,   -1.5f, 2.25f, 1e-3f, 4, 5, 6};
  const double vel[15] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double mass[5] = {0.5, 0.5, 0.5, 0.25, 0.25};
  const uint64_t ids[5] = {10, 11, 12, 20, 21};
  cr_assert(memcmp(s.pos, pos, sizeof pos) == 0, "coordinates");
  cr_assert(memcmp(s.vel, vel, sizeof vel) == 0, "velocities");
  cr_assert(memcmp(s.mass, mass, sizeof mass) == 0, "masses");
  cr_assert(memcmp(s.ids, ids, sizeof ids) == 0, "IDs");
  cr_assert_null(s.pot, "Potentials of type 3 only must not be read");
  cr_assert_null(s.acc);
  cr_assert_eq(s.nstate, 0);
  cr_assert_null(s.state);
  /* No creation order kept: sorted by name. */
  const char *names[4] = {"Alpha", "Beta", "Delta", "Gamma"};
  const char *values[4] = {"abc", "x", "1 -2", "0.10000000000000001"};
  cr_assert_eq(s.nparams, 4);
  for (int k = 0; k < 4; k++) {
    cr_assert_str_eq(s.params[k].name, names[k]);
    cr_assert_str_eq(s.params[k].value, values[k]);
  }
  snapshot_free(&s);
}

/* The same, after giving type 1 Masses, dropping the IDs and Parameters,
 * and giving both types Potentials and Accelerations. */
Test(snapshot, reads_optional_datasets_of_every_type) {
  make_gadget_file(sp("gadget.h5"));
  const hid_t file = h5_open(sp("gadget.h5"));
  const double m1[3] = {1, 2, 3}, pot1[3] = {-3, -4, -5};
  const double acc[9] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  const size_t d3[1] = {3}, d33[2] = {3, 3}, d23[2] = {2, 3};
  const hid_t d = H5T_NATIVE_DOUBLE;
  h5_dataset(file, "PartType1/Masses", d, d, 1, d3, m1);
  h5_dataset(file, "PartType1/Potentials", d, d, 1, d3, pot1);
  h5_dataset(file, "PartType1/Accelerations", d, d, 2, d33, acc);
  h5_dataset(file, "PartType3/Accelerations", H5T_IEEE_F32LE, d, 2, d23, acc);
  cr_assert_geq(H5Ldelete(file, "PartType1/ParticleIDs", H5P_DEFAULT), 0);
  cr_assert_geq(H5Ldelete(file, "PartType3/ParticleIDs", H5P_DEFAULT), 0);
  cr_assert_geq(H5Ldelete(file, "Parameters", H5P_DEFAULT), 0);
  h5_close(file);
  snapshot s;
  cr_assert_eq(snapshot_read(sp("gadget.h5"), &s), 1, "%s", errors());
  const double mass[5] = {1, 2, 3, 0.25, 0.25}, pot[5] = {-3, -4, -5, -1, -2};
  const double acc_all[15] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 8, 7, 6, 5, 4};
  const uint64_t ids[5] = {1, 2, 3, 4, 5};
  cr_assert(memcmp(s.mass, mass, sizeof mass) == 0, "masses");
  cr_assert_not_null(s.pot);
  cr_assert_not_null(s.acc);
  cr_assert(memcmp(s.pot, pot, sizeof pot) == 0, "potentials");
  cr_assert(memcmp(s.acc, acc_all, sizeof acc_all) == 0, "accelerations");
  cr_assert(memcmp(s.ids, ids, sizeof ids) == 0, "IDs 1..n");
  cr_assert_eq(s.nparams, 0);
  snapshot_free(&s);
}

/* What h5py sees; the values are those of known_snapshot. */
static const char h5py_check[] =
    "import sys, h5py, numpy as np\n"
    "f = h5py.File(sys.argv[1], 'r')\n"
    "n = 5\n"
    "i = np.arange(n, dtype=float)[:, None]; c = np.arange(3.0)[None, :]\n"
    "pos = i - 0.5 * c - 1.25\n"
    "h = f['Header'].attrs\n"
    "def check(name, dtype, value):\n"
    "    v = np.asarray(h[name])\n"
    "    assert v.dtype == np.dtype(dtype), (name, v.dtype)\n"
    "    assert v.shape == np.shape(value), (name, v.shape)\n"
    "    assert np.array_equal(v, value), (name, v)\n"
    "check('NumPart_ThisFile', 'uint32', [0, n, 0, 0, 0, 0])\n"
    "check('NumPart_Total', 'uint32', [0, n, 0, 0, 0, 0])\n"
    "check('NumPart_Total_HighWord', 'uint32', [0] * 6)\n"
    "check('MassTable', 'float64', [0.0] * 6)\n"
    "# SWIFT's shapes: arrays of one (swiftsimio reads Time[0]), of three.\n"
    "check('Time', 'float64', [2.5])\n"
    "check('Redshift', 'float64', [0.0])\n"
    "check('Scale-factor', 'float64', [1.0])\n"
    "check('BoxSize', 'float64', [2 * np.abs(pos).max() * (1 + 2**-20)] * 3)\n"
    "check('Shift', 'float64', [0.0] * 3)  # no output: unshifted\n"
    "check('NumFilesPerSnapshot', 'int32', [1])\n"
    "check('Dimension', 'int32', [3])\n"
    "assert h['Code'] == b'SWIFT' and h['UnitSystem'].startswith(b'N-body')\n"
    "u = f['Units'].attrs\n"
    "for k in ['Unit mass in cgs (U_M)', 'Unit length in cgs (U_L)',\n"
    "          'Unit time in cgs (U_t)']:\n"
    "    assert np.array_equal(u[k], [1.0]), (k, u[k])\n"
    "assert np.array_equal(f['Cosmology'].attrs['Cosmological run'], [0])\n"
    "for k, v in [('Flag_Sfr', 0), ('Flag_Cooling', 0), ('Flag_Feedback', 0),\n"
    "             ('Flag_StellarAge', 0), ('Flag_Metals', 0),\n"
    "             ('Flag_DoublePrecision', 1)]:\n"
    "    check(k, 'int32', v)\n"
    "for k, v in [('Omega0', 0.0), ('OmegaLambda', 0.0), ('HubbleParam', 1)]:\n"
    "    check(k, 'float64', v)\n"
    "p = f['PartType1']\n"
    "want = {'Coordinates': pos, 'Velocities': 2 * pos,\n"
    "        'Accelerations': -pos, 'Masses': 1 + i[:, 0],\n"
    "        'Potentials': -i[:, 0]}\n"
    "assert np.array_equal(p['Velocities'].attrs['U_L exponent'], [1])\n"
    "assert np.array_equal(p['Velocities'].attrs['U_t exponent'], [-1])\n"
    "for k, v in want.items():\n"
    "    assert p[k].dtype == np.float64 and p[k].shape == v.shape, k\n"
    "    assert np.array_equal(p[k][...], v), (k, p[k][...])\n"
    "ids = p['ParticleIDs']\n"
    "assert ids.dtype == np.uint64 and ids.shape == (n,), ids\n"
    "assert list(ids[...]) == [2**40 + k for k in range(n)], ids[...]\n"
    "a = f['Parameters'].attrs\n"
    "assert list(a.keys()) == ['Gravity:theta', 'Time:end'], list(a.keys())\n"
    "# Fixed-length strings, as SWIFT writes them: h5py reads bytes.\n"
    "assert a['Gravity:theta'] == b'0.5' and a['Time:end'] == b'10', dict(a)\n"
    "assert isinstance(a['Gravity:theta'], bytes), type(a['Gravity:theta'])\n"
    "assert f['RunState'].attrs['step'] == b'42'\n"
    "for k in want:\n"
    "    assert p[k].fletcher32 and p[k].chunks is not None, k\n"
    "print('h5py sees what was written')\n";

/* A python3 that can import h5py, or NULL. */
static const char *python_with_h5py(void) {
  static const char *const candidates[] = {"python3", "/usr/bin/python3"};
  for (size_t k = 0; k < sizeof candidates / sizeof candidates[0]; k++) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s -c 'import h5py' >/dev/null 2>&1",
             candidates[k]);
    if (system(cmd) == 0)
      return candidates[k];
  }
  return NULL;
}

Test(snapshot, h5py_reads_what_is_written) {
  const char *python = python_with_h5py();
  if (python == NULL)
    cr_skip_test("no python3 with h5py (tried python3, /usr/bin/python3): "
                 "the file is not checked with h5py");
  enum { n = 5 };
  double pos[3 * n], vel[3 * n], acc[3 * n], mass[n], pot[n];
  uint64_t ids[n];
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < 3; c++) {
      pos[3 * i + c] = i - 0.5 * c - 1.25;
      vel[3 * i + c] = 2 * pos[3 * i + c];
      acc[3 * i + c] = -pos[3 * i + c];
    }
    mass[i] = 1 + i;
    pot[i] = -i;
    ids[i] = ((uint64_t)1 << 40) + (uint64_t)i;
  }
  snapshot_attr params[2] = {{"Gravity:theta", "0.5"}, {"Time:end", "10"}};
  snapshot_attr state[1] = {{"step", "42"}};
  const snapshot s = {.n = n,
                      .time = 2.5,
                      .pos = pos,
                      .vel = vel,
                      .mass = mass,
                      .acc = acc,
                      .pot = pot,
                      .ids = ids,
                      .params = params,
                      .nparams = 2,
                      .state = state,
                      .nstate = 1};
  cr_assert_eq(snapshot_write(sp("snap.h5"), &s), 1, "%s", errors());
  write_text("check.py", h5py_check);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s %s >%s 2>&1", python, sp("check.py"),
           sp("snap.h5"), sp("python.txt"));
  const int status = system(cmd);
  char *said = read_text("python.txt");
  cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "h5py check failed:\n%s", said != NULL ? said : "");
  free(said);
}

/* What keeps a damaged file from crashing the reader or going unnoticed:
 * no variable-length string (they live in the global heap, whose damage
 * crashes libhdf5), and a Fletcher-32 checksum on every dataset. */
static herr_t assert_fixed_length(hid_t loc, const char *name,
                                  const H5A_info_t *info, void *data) {
  (void)info;
  int *count = data;
  const hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  cr_assert_eq(H5Tget_class(type), H5T_STRING, "%s", name);
  cr_assert_eq(H5Tis_variable_str(type), 0, "%s is variable-length", name);
  H5Tclose(type);
  H5Aclose(attr);
  (*count)++;
  return 0;
}

Test(snapshot, fixed_length_strings_and_checksummed_data) {
  snapshot s = random_snapshot(200000, 16, 1);
  cr_assert_eq(snapshot_write(sp("snap.h5"), &s), 1, "%s", errors());
  const hid_t file = H5Fopen(sp("snap.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert_geq(file, 0);
  const char *groups[2] = {"Parameters", "RunState"};
  /* /RunState also holds ParametersChecksum (a fixed-length string). */
  const size_t want[2] = {s.nparams, s.nstate + 1};
  for (int k = 0; k < 2; k++) {
    const hid_t g = H5Gopen2(file, groups[k], H5P_DEFAULT);
    int count = 0;
    cr_assert_geq(H5Aiterate2(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL,
                              assert_fixed_length, &count),
                  0);
    cr_assert_eq((size_t)count, want[k], "%s", groups[k]);
    H5Gclose(g);
  }
  const char *sets[6] = {"Coordinates", "Velocities",    "Masses",
                         "ParticleIDs", "Accelerations", "Potentials"};
  for (int k = 0; k < 6; k++) {
    char name[64];
    snprintf(name, sizeof name, "PartType1/%s", sets[k]);
    const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(set);
    cr_assert_eq(H5Pget_layout(dcpl), H5D_CHUNKED, "%s", name);
    cr_assert_eq(H5Pget_nfilters(dcpl), 1, "%s", name);
    unsigned flags, config;
    size_t nvalues = 0;
    cr_assert_eq(
        H5Pget_filter2(dcpl, 0, &flags, &nvalues, NULL, 0, NULL, &config),
        H5Z_FILTER_FLETCHER32, "%s", name);
    /* Several chunks: 200000 bodies are more than 1 MiB a dataset. */
    hsize_t chunk[2];
    cr_assert_geq(H5Pget_chunk(dcpl, 2, chunk), 1);
    cr_assert_lt(chunk[0], s.n, "%s is one chunk", name);
    H5Pclose(dcpl);
    H5Dclose(set);
  }
  H5Fclose(file);
  size_t len;
  unsigned char *bytes = read_bytes(sp("snap.h5"), &len);
  cr_assert_lt(find_bytes(bytes, len, "GCOL", 4), 0, "a global heap");
  free(bytes);
  snapshot_free(&s);
}

/* The HDF5 format lets a file start with a user block of 512, 1024,
 * 2048, ... bytes; the superblock follows it. */
Test(snapshot, recognises_hdf5_after_a_user_block) {
  snapshot s = random_snapshot(7, 17, 0), back;
  cr_assert_eq(snapshot_write(sp("snap.h5"), &s), 1, "%s", errors());
  const size_t blocks[3] = {512, 1024, 8192};
  for (int k = 0; k < 3; k++) {
    h5_copy_with_user_block(sp("snap.h5"), sp("ub.h5"), blocks[k]);
    cr_assert_eq(snapshot_is_hdf5(sp("ub.h5")), 1, "user block %zu", blocks[k]);
    cr_assert_eq(snapshot_read(sp("ub.h5"), &back), 1, "%s", errors());
    assert_same_snapshot(&s, &back);
    snapshot_free(&back);
  }
  /* The signature elsewhere is not HDF5's: at 100, or at 768. */
  size_t len;
  unsigned char *bytes = read_bytes(sp("snap.h5"), &len);
  const size_t offsets[2] = {100, 768};
  for (int k = 0; k < 2; k++) {
    unsigned char *moved = calloc(len + offsets[k], 1);
    memset(moved, ' ', offsets[k]);
    memcpy(moved + offsets[k], bytes, len);
    write_bytes(sp("moved.h5"), moved, len + offsets[k]);
    cr_assert_eq(snapshot_is_hdf5(sp("moved.h5")), 0, "offset %zu", offsets[k]);
    free(moved);
  }
  free(bytes);
  snapshot_free(&s);
}
