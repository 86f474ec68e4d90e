/* The bodies of a command's --in FILE, as 'tilefmm run --ic FILE' and
 * 'tilefmm render FILE' read them: a snapshot (HDF5 in the GADGET/SWIFT
 * layout, Tipsy, or GADGET-2 binary format 1 or 2), told by its first
 * bytes whatever its name, or else a text body file (bodyio.h). */
#ifndef TFMM_BODY_INPUT_H
#define TFMM_BODY_INPUT_H

#include "bodyio.h"
#include "snapshot.h"

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

/* The name of standard input as an input (--in -, --ic -). */
#define BODY_INPUT_STDIN "-"

/* The path an input is read by: "/dev/stdin" for "-" when standard input
 * is a regular file ('< FILE'), which can be opened again and read from
 * its start as any file (a snapshot too); else path itself. */
const char *body_input_path(const char *path);

/* Whether path is read as a stream, once, from its first byte: standard
 * input ("-") unless a regular file, or anything but a regular file or a
 * directory (a pipe, /dev/stdin on a pipe, bash's <(...), a terminal). Such an
 * input can only be a text body file: a snapshot is read by seeking in it. */
int body_input_is_stream(const char *path);

/* What a file holds, told by its first bytes (tfmm_snapshot_probe): the
 * HDF5 signature, a GADGET-2 header record, a Tipsy header, a GADGET-2
 * opening marker alone, else text. When
 * no file is named path, but one is named path.0, that one is probed: a
 * GADGET-2 snapshot in several files may be named by its BASE. (which
 * bodyio_read refuses when it is binary). A file that cannot be read is
 * BODY_INPUT_TEXT: bodyio_read says why. A stream (body_input_is_stream)
 * is BODY_INPUT_TEXT, not read: the bytes read would be lost. */
typedef enum body_input_kind {
  BODY_INPUT_TEXT,
  BODY_INPUT_HDF5,
  BODY_INPUT_GADGET2,
  BODY_INPUT_TIPSY
} body_input_kind;
body_input_kind body_input_kind_of(const char *path);

/* Reads the snapshot path, of a kind other than text, as
 * snapshot_read_types reads an HDF5 one: the particle types chosen (a
 * mask), flag the option that chooses them (for messages); out is
 * released with snapshot_free, also after a failure. Prints why and
 * returns 0 on failure. */
int body_input_read_snapshot(const char *path, body_input_kind kind,
                             uint64_t types, const char *flag, snapshot *out);

/* Reads path into out (release with bodyio_free, also after a failure).
 * types is the text of --types, or NULL: a snapshot's types are then
 * chosen as snapshot_read_types does by default, and a text file, which
 * has no types, refuses it. Velocities are kept (zeros where absent).
 * A stream (body_input_is_stream) is read once, as text; a binary one is
 * refused, saying why. Prints why and returns 0 on failure. path is
 * marked as an input (atomic_file_protect). */
int body_input_read(const char *path, const char *types, bodyio_bodies *out);

/* body_input_read, with the file's unit system into *u (mass 0: N-body
 * units, or none: a text file, Tipsy, GADGET-2 without units), for the
 * caller to compute in. body_input_read itself notes physical units on
 * stderr, with the G they need, as its callers compute with --G. */
int body_input_read_units(const char *path, const char *types,
                          bodyio_bodies *out, units *u);

/* body_input_read_units for a command whose errors are relative (validate,
 * tune): the file's physical units said on stderr with their G, and a --G
 * (G_given, G) that contradicts them refused naming both (units_settle_G);
 * *usage is then set. The solvers keep their G: the errors are the same
 * in any units. */
int body_input_read_relative(const char *command, const char *path,
                             const char *types, int G_given, double G,
                             bodyio_bodies *out, int *usage);

#endif
