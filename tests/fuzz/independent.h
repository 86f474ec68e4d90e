/* The fuzz harness's independent reading of a damaged file that the tool
 * read (forces exit 0, another output than the undamaged seed's): its
 * bodies read with the HDF5 C API directly, not through tilefmm, and
 * their forces summed pair by pair in double. */
#ifndef TFMM_FUZZ_INDEPENDENT_H
#define TFMM_FUZZ_INDEPENDENT_H

/* Whether forces (the tool's output of forces --method reference, G = 1,
 * no softening) agree with file's PartType1 to 1e-9 of the largest
 * value: 1 yes, 0 no, -1 when the independent reader cannot read file. */
int independent_forces_agree(const char *file, const char *forces);

#endif
