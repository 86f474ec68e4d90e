/* Choosing the particle types of a snapshot to read, for every reader
 * (HDF5, Tipsy, GADGET-2): by default a file
 * must hold one type, not gas; several types, or gas, are read only when
 * --types names them, never merged silently. Types are GADGET's: 0 gas,
 * 1 dark matter, 4 stars, 5 black holes (Tipsy's gas, dark and star
 * particles are types 0, 1 and 4, so that --types means the same). */
#ifndef TFMM_PARTICLE_TYPES_H
#define TFMM_PARTICLE_TYPES_H

#include <stdint.h>

#define PARTICLE_TYPES_MAX 64

/* Chooses among the ntypes counts of path (count[k]: particles of type k,
 * named label followed by k in messages: "PartType" for HDF5's groups,
 * "type " for the binary formats)
 * the types of the mask types (SNAPSHOT_TYPES_DEFAULT or _ALL, or bits),
 * and zeroes the counts of the others. flag names the option in messages
 * (NULL: the command has none). When flag is not NULL and types is not
 * the default, a note on stderr names the types and counts read. Prints
 * why and returns 0 when the choice is refused (several types or gas
 * unasked, a type asked for that the file does not hold, no particles). */
int particle_types_select(const char *path, const char *label, int ntypes,
                          uint64_t *count, uint64_t types, const char *flag);

/* What is wrong with a particle of coordinates x[3], velocity v[3] (NULL:
 * none read) and mass m: "a non-finite coordinate", "a non-finite
 * velocity", "a non-finite mass", "a mass <= 0", or NULL when nothing is
 * (the checks snapshot_check makes, for readers that name the byte
 * offset). */
const char *particle_types_fault(const double *x, const double *v, double m);

#endif
