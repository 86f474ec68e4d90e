/* GADGET-2 binary snapshots (SnapFormat 1 and 2; GADGET-2 user guide,
 * section 6.1): Fortran records, each framed by its length in a 4-byte
 * marker before and after it. The first is the 256-byte header
 *   int32 npart[6]; double massarr[6], time, redshift; int32 flag_sfr,
 *   flag_feedback; uint32 npartTotal[6]; int32 flag_cooling, num_files;
 *   double BoxSize, Omega0, OmegaLambda, HubbleParam; int32
 *   flag_stellarage, flag_metals; uint32 npartTotalHighWord[6]; ...
 * then the blocks POS (3 floats a particle, or doubles: the record's
 * length tells), VEL, ID (uint32 or uint64) and MASS (the particles of the
 * types whose massarr is 0), in type order; gas blocks (U, RHO, ...)
 * follow and are not read. Format 2 puts before each block a record of 8
 * bytes, its name ("HEAD", "POS ", "VEL ", "ID  ", "MASS") and the next
 * record's length. Either byte order, told by the first marker (256, or 8
 * in format 2). A snapshot in several files (num_files > 1, named
 * BASE.0, BASE.1, ...) is read whole from any of its parts, or from
 * BASE. See docs/formats.md. */
#ifndef TFMM_GADGET2_READ_H
#define TFMM_GADGET2_READ_H

#include "snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* Whether the first len bytes of a file open a GADGET-2 snapshot: 2 when
 * they hold the 8-byte record naming HEAD (format 2), or a 256-byte
 * record framed by its two markers (format 1); 1 when they hold only the
 * opening marker 256 (a truncated file, for gadget2_read to report); else
 * 0. Either byte order. */
int gadget2_probe(const unsigned char *head, size_t len);

/* Reads the particles of the types chosen (particle_types_select) into
 * out, zeroed first (release with snapshot_free, also after a failure), in
 * type order, each type in file order: positions, velocities (as stored:
 * sqrt(a) dx/dt, which is the velocity when time is time), masses (the
 * MASS block or massarr), IDs (1..n where format 2 has no ID block) and
 * the header's time. A cosmological snapshot (Redshift != 0: time is the
 * scale factor a < 1, positions comoving) is refused: tilefmm computes
 * the Newtonian gravity of isolated bodies and does not convert
 * coordinates. Refuses, naming the file, the block and the byte offset:
 * markers that do not frame their records, a truncated record, block
 * sizes that do not match the header's counts, parts of a multi-file
 * snapshot that disagree, a non-finite number or a mass <= 0. Prints why
 * and returns 0 on failure. */
int gadget2_read(const char *path, uint64_t types, const char *flag,
                 snapshot *out);

/* BASE.0 (to free) when path is the BASE of a snapshot in several files:
 * no file of that name, but one named BASE.0; else NULL. gadget2_read
 * reads the snapshot from it. */
char *gadget2_first_part(const char *path);

#endif
