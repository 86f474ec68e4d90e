/* The seed files of the readers' fuzz harness (fuzz_readers.c) that
 * tilefmm does not write itself; also made by the regression tests of
 * damaged files (tests/cli/test_hdf5_damage.c). Each returns 0, or
 * prints why not and returns 1. */
#ifndef TFMM_FUZZ_SEEDS_H
#define TFMM_FUZZ_SEEDS_H

/* A GADGET-4-like snapshot of 64 bodies (PartType1: Coordinates,
 * Velocities as float, Masses, ParticleIDs; /Header with GADGET-4's unit
 * keys) in HDF5's default, earliest file format, as h5py writes by
 * default: its metadata carries no checksum. The same bytes every time
 * (no modification times). */
int fuzz_seed_gadget4(const char *path);

/* A copy of the tilefmm checkpoint checkpoint in the earliest format
 * whose /Parameters hold variable-length strings, as an edit with h5py
 * leaves them (their text in HDF5's global heap). */
int fuzz_seed_vlstrings(const char *path, const char *checkpoint);

/* The bodies of fuzz_seed_gadget4 (as float) in tilefmm's other binary
 * formats: Tipsy (native byte order, dark particles) and GADGET-2
 * SnapFormat 1 (POS, VEL, ID; masses in massarr). */
int fuzz_seed_tipsy(const char *path);
int fuzz_seed_gadget2(const char *path);

/* The same bodies as a GADGET-2 snapshot in two files, BASE.0 (the first
 * half) and BASE.1 (num_files 2). */
int fuzz_seed_gadget2_parts(const char *base);

/* The same bodies (as float) in a text body file: x y z m vx vy vz. */
int fuzz_seed_text(const char *path);

/* A YAML parameter file of tilefmm run (SWIFT style). */
int fuzz_seed_params(const char *path);

#endif
