/* The bodies of a command's --in FILE: an HDF5 snapshot in the GADGET/SWIFT
 * layout, told by its signature whatever its name, or else a text body
 * file (bodyio.h), as 'tilefmm run --ic FILE' reads them. */
#ifndef TFMM_BODY_INPUT_H
#define TFMM_BODY_INPUT_H

#include "bodyio.h"

#include <stdint.h>

/* The --types option: "all", or particle types 0 to 63 separated by
 * commas ("0,1,4"). */
#define BODY_INPUT_TYPES_FLAG "--types"
#define BODY_INPUT_TYPES_EXPECT                                                \
  "particle types 0 to 63 separated by commas (0,1,4), or all"

/* Parses text into a mask of types (bit k for PartType<k>); 0 when it is
 * not such a list. */
int body_input_parse_types(const char *text, uint64_t *mask);

/* args_option.valid for --types (the value is a const char *). */
int body_input_types_ok(const void *value);

/* Reads path into out (release with bodyio_free, also after a failure).
 * types is the text of --types, or NULL: a snapshot's types are then
 * chosen as snapshot_read_types does by default, and a text file, which
 * has no types, refuses it. Velocities are kept (zeros where absent).
 * Prints why and returns 0 on failure. path is marked as an input
 * (atomic_file_protect). */
int body_input_read(const char *path, const char *types, bodyio_bodies *out);

#endif
