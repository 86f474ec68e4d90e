/* The command line's face of the library's snapshot files (tilefmm.h,
 * "Snapshot files"; the layout in docs/formats.md): the calls of the
 * commands, which print the library's messages ("tilefmm: PATH: what is
 * wrong"), write through atomic_file (a temporary renamed over the
 * destination, inputs never replaced) and keep every file read from
 * being replaced by an output (atomic_file_protect). The snapshot struct
 * is the library's tfmm_snapshot with the output it is written with. */
#ifndef TFMM_SNAPSHOT_H
#define TFMM_SNAPSHOT_H

#include "atomic_file.h"
#include "units.h"

#include "tilefmm.h"

#include <stddef.h>
#include <stdint.h>

/* The optional datasets of a snapshot (Coordinates, Masses and
 * ParticleIDs are always written). */
#define SNAPSHOT_FIELD_VELOCITIES TFMM_SNAPSHOT_VELOCITIES
#define SNAPSHOT_FIELD_ACCELERATIONS TFMM_SNAPSHOT_ACCELERATIONS
#define SNAPSHOT_FIELD_POTENTIALS TFMM_SNAPSHOT_POTENTIALS
#define SNAPSHOT_FIELDS_ALL TFMM_SNAPSHOT_ALL
#define SNAPSHOT_FIELDS_EXPECT                                                 \
  "all, or datasets separated by commas (Coordinates, Velocities, Masses, "    \
  "ParticleIDs, Accelerations, Potentials)"

/* How a snapshot for readers is written (a checkpoint has none: every
 * dataset, in double precision, uncompressed, unshifted, so that a restart
 * is bit for bit). */
typedef tfmm_snapshot_output snapshot_output;

/* Parses "all" or a list of dataset names into SNAPSHOT_FIELD_* bits;
 * 0 when the text is no such list. */
int snapshot_parse_fields(const char *text, unsigned *fields);

/* Where the units of a file read came from. */
typedef enum snapshot_units_source {
  SNAPSHOT_UNITS_NONE = TFMM_UNITS_NONE,
  SNAPSHOT_UNITS_NBODY = TFMM_UNITS_NBODY,
  SNAPSHOT_UNITS_SWIFT = TFMM_UNITS_SWIFT,
  SNAPSHOT_UNITS_GADGET4 = TFMM_UNITS_GADGET4
} snapshot_units_source;

/* A named text value. Numbers are written with %.17g (doubles) or as
 * integers, so that they read back to the same bits. */
typedef tfmm_attr snapshot_attr;

typedef struct snapshot {
  size_t n;
  double time;
  double *pos;           /* 3n, required */
  double *vel;           /* 3n, required on write; zeros on read when absent */
  double *mass;          /* n, each > 0 */
  double *acc;           /* 3n or NULL: not written; NULL on read when absent */
  double *pot;           /* n or NULL: not written; NULL on read when absent */
  uint64_t *ids;         /* n, required on write; 1..n on read when absent */
  snapshot_attr *params; /* /Parameters */
  size_t nparams;
  snapshot_attr *state; /* /RunState; nstate = 0: no such group */
  size_t nstate;
  signed char *bins; /* n or NULL: the time bins of individual steps
                        (PartType1/TimeBins, int8): not written; NULL on
                        read when absent */
  units units;       /* the unit system: mass 0 for N-body units (written as
                        1 g, 1 cm, 1 cm/s with Header UnitSystem "N-body");
                        on read, the file's (zeros when it has none) */
  snapshot_units_source units_source; /* on read */
  double G;                           /* newton_G of /PhysicalConstants;
                                         0: not written; on read, ignored */
  const snapshot_output *output;      /* NULL: a checkpoint's full, exact
                                         datasets */
} snapshot;

/* Writes s to path (tfmm_snapshot_write_file with s->output) through
 * atomic_file. Prints "tilefmm: PATH: what is wrong" and returns 0 on
 * failure (path untouched, no temporary left), else 1. */
int snapshot_write(const char *path, const snapshot *s);

/* snapshot_write up to the commit: s written to a temporary beside path,
 * closed, which atomic_file_commit(af) syncs and renames over path (from
 * any thread; atomic_file_discard abandons it). On failure, printed as
 * snapshot_write, nothing is left and 0 is returned. */
int snapshot_write_uncommitted(const char *path, const snapshot *s,
                               atomic_file *af);

/* Reads the HDF5 snapshot path into out (zeroed first; release with
 * snapshot_free, also after a failure): the whole file, as tilefmm's
 * checkpoints need it: every particle type present, in type order, with
 * /Parameters and /RunState (tfmm_snapshot_read with TFMM_TYPES_ALL and
 * attributes). Prints the message and returns 0 on failure, else 1. */
int snapshot_read(const char *path, snapshot *out);

/* snapshot_read without /Parameters and /RunState (out->nparams and
 * out->nstate are 0): what initial conditions need. A
 * damaged group that is not read cannot stop the read. The file must
 * hold particles of one type, not gas (PartType0): tilefmm computes
 * gravity alone, so that gas taken for collisionless bodies, or several
 * types merged into one set, must be asked for (snapshot_read_types);
 * such a file is refused, naming its types and their counts. */
int snapshot_read_bodies(const char *path, snapshot *out);

/* Which particle types snapshot_read_types reads: bit k for PartType<k>,
 * or one of these. */
#define SNAPSHOT_TYPES_DEFAULT TFMM_TYPES_DEFAULT /* one type, not gas */
#define SNAPSHOT_TYPES_ALL TFMM_TYPES_ALL         /* every type present */

/* snapshot_read_bodies of the types chosen (bits of absent types are
 * refused, but in SNAPSHOT_TYPES_ALL), concatenated in type order. flag
 * is the option that chooses them, named in messages; when it is not
 * NULL and types is not SNAPSHOT_TYPES_DEFAULT, a note on stderr names
 * the types and counts read. */
int snapshot_read_types(const char *path, uint64_t types, const char *flag,
                        snapshot *out);

/* snapshot_read_types of a snapshot in any format the library reads
 * (format TFMM_FORMAT_UNKNOWN: told from its first bytes). The parts of a
 * GADGET-2 snapshot in several files are kept from being replaced by an
 * output (atomic_file_protect). */
int snapshot_read_format(const char *path, tfmm_format format, uint64_t types,
                         const char *flag, snapshot *out);

/* The value of the attribute name in attrs[0 .. count), or NULL. */
const char *snapshot_attr_find(const snapshot_attr *attrs, size_t count,
                               const char *name);

void snapshot_free(snapshot *s);

/* 1 when path holds the HDF5 signature where the HDF5 format puts it: at
 * offset 0, or after a user block at 512, 1024, 2048, ... bytes; 0
 * otherwise (also when it cannot be read). */
int snapshot_is_hdf5(const char *path);

#endif
