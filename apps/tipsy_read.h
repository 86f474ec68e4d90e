/* Tipsy binary files (Tipsy, PKDGRAV, ChaNGa, pynbody): a header
 *   double time; int nbodies, ndim, nsph, ndark, nstar, pad;
 * then nsph gas particles of 12 floats (mass, pos[3], vel[3], rho, temp,
 * hsmooth, metals, phi), ndark dark particles of 9 (mass, pos[3], vel[3],
 * eps, phi) and nstar star particles of 11 (mass, pos[3], vel[3], metals,
 * tform, eps, phi). "Standard" files are big-endian (XDR), native ones
 * little-endian; the byte order is the one whose header is consistent
 * (ndim 3, the counts summing to nbodies) and whose particles fill the file
 * exactly, after a header of 32 bytes (or 28, without pad). See
 * docs/formats.md. */
#ifndef TFMM_TIPSY_READ_H
#define TFMM_TIPSY_READ_H

#include "snapshot.h"

#include <stddef.h>
#include <stdint.h>

/* 1 when the first len bytes of a file hold a consistent Tipsy header in
 * either byte order (the size is not checked: tipsy_read reports it). */
int tipsy_probe(const unsigned char *head, size_t len);

/* Reads the particles of the types chosen (particle_types_select; gas,
 * dark and star are GADGET's types 0, 1 and 4) into out, zeroed first
 * (release with snapshot_free, also after a failure), in file order:
 * positions, velocities and masses; time from the header; IDs are the
 * particles' places in the file, 1 to nbodies (Tipsy has none). Per-body
 * softenings, densities and the rest are not read. Refuses, naming the
 * file, the part and the byte offset: a header that is not Tipsy's, a
 * size that does not match the header (truncated, or extra bytes), a
 * non-finite number or a mass <= 0. Prints why and returns 0 on failure. */
int tipsy_read(const char *path, uint64_t types, const char *flag,
               snapshot *out);

#endif
