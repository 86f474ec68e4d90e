/* The fuzz harness's independent reading of a damaged file that the tool
 * read (exit 0): its bodies read without tilefmm, by the rules of
 * docs/formats.md (HDF5 through the HDF5 C API; Tipsy, GADGET-2 format 1
 * in one file or several, and text bodies byte by byte), so that what
 * the tool made of the file can be checked against it. */
#ifndef TFMM_FUZZ_INDEPENDENT_H
#define TFMM_FUZZ_INDEPENDENT_H

#include <stddef.h>
#include <stdint.h>

enum { INDEP_MAX = 4096 };

typedef struct indep_bodies {
  size_t n;
  double time;
  /* 0 when an HDF5 file's Velocities or ParticleIDs exist but cannot be
   * read: a command that uses them must refuse the file, one that reads
   * positions and masses alone (forces, validate, render) need not. */
  int have_vel, have_ids;
  double x[3 * INDEP_MAX], v[3 * INDEP_MAX], m[INDEP_MAX];
  uint64_t id[INDEP_MAX];
} indep_bodies;

/* Reads path into b, in a child process (libhdf5 may crash on a damaged
 * file). Returns 1 when read; 0 when the file breaks its format's rules
 * as docs/formats.md states them (the tool must refuse it); -1 when this
 * reader cannot tell (a feature it does not read, its own crash). */
int independent_read(const char *path, indep_bodies *b);

/* Whether forces (the tool's output of forces --method reference, no
 * softening) are those of b's bodies summed pair by pair in double, times
 * one G > 0 (the file's units' G, or 1; fitted, not read: the bodies are
 * what is checked here), to 1e-9 of the largest value: 1 yes, 0 no. */
int independent_forces_agree(const indep_bodies *b, const char *forces);

/* Whether a and b hold the same bodies in the same order: IDs and times
 * equal, positions, velocities and masses to 1e-12 of their scale (a
 * snapshot's coordinates are shifted and back). 1 yes, 0 no. */
int independent_bodies_agree(const indep_bodies *a, const indep_bodies *b);

/* Writes b as a text body file (x y z m vx vy vz, each exact in %.17g).
 * Returns 1 on success. */
int independent_write_text(const indep_bodies *b, const char *path);

/* A SWIFT-style YAML parameter file of the flat grammar tilefmm writes
 * (`Section:` lines, then `  key: value` lines, `#` comments), read line
 * by line, as "Section:key:value" words for `run -P` in words[0..*n).
 * Returns 1 when read; -1 for anything outside that grammar (flow style,
 * anchors, tags, block scalars, tabs, odd bytes: left unchecked). */
int independent_read_params(const char *path, char words[][512], int cap,
                            int *n);

#endif
