/* Snapshots in SWIFT's HDF5 layout, which is GADGET's with units, and
 * which swiftsimio, yt, pynbody and h5py read:
 *   /Header      NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord
 *                (uint32[6]), MassTable (double[6]), and as SWIFT writes
 *                them Time, Redshift, Scale-factor (double[1]), BoxSize
 *                (double[3]), Dimension, NumFilesPerSnapshot (int32[1]),
 *                Shift (double[3]), Code "SWIFT" (yt tells SWIFT's layout
 *                by it), OutputType, UnitSystem; GADGET-4's
 *                UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s
 *                and GADGET's Flag_* (int32), Omega0, OmegaLambda,
 *                HubbleParam
 *   /PartType1   Coordinates, Velocities, Accelerations (n x 3),
 *                Masses, Potentials (n), ParticleIDs (uint64 n), each
 *                with SWIFT's unit attributes (U_M exponent, ...,
 *                Conversion factor to CGS ..., Description)
 *   /Units, /InternalCodeUnits  SWIFT's unit system (double[1] each)
 *   /Cosmology (Cosmological run 0), /Policy, /Code, /RuntimePars,
 *   /HydroScheme, /SubgridScheme, /GravityScheme, /PhysicalConstants,
 *   /Cells       what swiftsimio, yt and pynbody look for (snapshot_meta.c)
 *   /Parameters  one string attribute per run parameter ("Section:key")
 *   /RunState    checkpoints only: string attributes of the run's state
 * See docs/units.md. Every body is of type 1 (GADGET's dark matter:
 * collisionless, gravity only). The strings are fixed-length, as SWIFT
 * writes them (h5py reads them as bytes): variable-length ones live in
 * HDF5's global heap, whose damage crashes libhdf5 instead of failing a
 * call. The datasets are chunked, each chunk with a Fletcher-32
 * checksum, and the file's metadata carries checksums too (the HDF5 1.8
 * format), so that a damaged file is refused rather than run from; every
 * attribute stays in its object's header (which the checksums cover).
 * Files are written to a temporary beside the destination, synced and
 * renamed over it, so that a failure (a full disk, say) leaves the
 * previous file intact. Only apps/ uses HDF5; the library does not. */
#ifndef TFMM_SNAPSHOT_H
#define TFMM_SNAPSHOT_H

#include "units.h"

#include <stddef.h>
#include <stdint.h>

/* The optional datasets of a snapshot (Coordinates, Masses and
 * ParticleIDs are always written). */
#define SNAPSHOT_FIELD_VELOCITIES 1u
#define SNAPSHOT_FIELD_ACCELERATIONS 2u
#define SNAPSHOT_FIELD_POTENTIALS 4u
#define SNAPSHOT_FIELDS_ALL 7u
#define SNAPSHOT_FIELDS_EXPECT                                                 \
  "all, or datasets separated by commas (Coordinates, Velocities, Masses, "    \
  "ParticleIDs, Accelerations, Potentials)"

/* How a snapshot for readers is written (a checkpoint has none: every
 * dataset, in double precision, uncompressed, unshifted, so that a restart
 * is bit for bit). */
typedef struct snapshot_output {
  unsigned fields; /* SNAPSHOT_FIELD_* of the optional datasets */
  int single;      /* floating-point datasets as float32 */
  int compression; /* gzip level 0 (none) to 9, with HDF5's shuffle */
} snapshot_output;

/* Parses "all" or a list of dataset names into SNAPSHOT_FIELD_* bits;
 * 0 when the text is no such list. */
int snapshot_parse_fields(const char *text, unsigned *fields);

/* Where the units of a file read came from. */
typedef enum snapshot_units_source {
  SNAPSHOT_UNITS_NONE,   /* no units: an older tilefmm, a text file, ... */
  SNAPSHOT_UNITS_NBODY,  /* tilefmm's N-body units (Header UnitSystem) */
  SNAPSHOT_UNITS_SWIFT,  /* /Units (SWIFT, tilefmm) */
  SNAPSHOT_UNITS_GADGET4 /* UnitLength_in_cm, ... (GADGET-4) */
} snapshot_units_source;

/* A named text value. Numbers are written with %.17g (doubles) or as
 * integers, so that they read back to the same bits. */
typedef struct snapshot_attr {
  char *name;  /* "Gravity:theta" */
  char *value; /* "0.5" */
} snapshot_attr;

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

/* Writes s to path atomically: 1 <= n <= UINT32_MAX (NumPart_ThisFile is
 * uint32), bodies that snapshot_check accepts, parameter and state names
 * non-empty and distinct; acc and pot are written when not NULL (and
 * output, if any, asks for them), /RunState when nstate > 0. BoxSize is a
 * little over 2 max |coordinate|, the smallest origin-centred cube holding
 * the bodies (they are not periodic). With an output (a snapshot for
 * readers), the coordinates are stored shifted by BoxSize / 2 into
 * [0, BoxSize), as SWIFT stores them and yt needs them, and Header Shift
 * says by how much (snapshot_read takes it off, to an ulp of BoxSize);
 * without (a checkpoint), Shift is 0 and the coordinates exact. Prints
 * "tilefmm: PATH: what is wrong" and returns 0 on failure (path untouched,
 * no temporary left), else 1. */
int snapshot_write(const char *path, const snapshot *s);

/* Reads path into out (zeroed first; release with snapshot_free, also
 * after a failure): the whole file, as tilefmm's checkpoints need it.
 * Every particle type present is read, in type order (snapshot_read_bodies
 * and snapshot_read_types choose them). Masses come from Masses, shaped
 * (n) or (n, 1), or else from MassTable; Coordinates and
 * Velocities may be float or double, ParticleIDs any integer type.
 * Accelerations and Potentials are read only when every type read holds
 * them. Header Shift, when present, is taken off the coordinates. The
 * units come from /Units (SWIFT's attributes) or else GADGET-4's
 * UnitLength_in_cm, UnitMass_in_g and UnitVelocity_in_cm_per_s in /Header
 * or /Parameters (out->units, out->units_source); inconsistent ones (a
 * time unit that is not length / velocity, a unit <= 0) are refused.
 * /Parameters and /RunState attributes keep their creation order when the file
 * tracks it (tilefmm's do), else come sorted by name; numeric ones are turned
 * into text; strings may be fixed-length or variable-length (tilefmm before
 * fixed-length strings). Refuses, naming the file and what is wrong: a file
 * that is not HDF5, a missing Header or attribute, a non-finite Time, dataset
 * shapes that disagree with NumPart_ThisFile, multi-file snapshots, a chunk
 * whose checksum does not match, bodies with a non-finite coordinate, velocity
 * or mass or a mass
 * <= 0 (naming the body's index and ID), and a negative ParticleID (naming
 * the body). Prints the message and returns 0 on failure, else 1. */
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
#define SNAPSHOT_TYPES_DEFAULT 0      /* one type, not gas, as snapshot_read */
#define SNAPSHOT_TYPES_ALL UINT64_MAX /* every type present */

/* snapshot_read_bodies of the types chosen (bits of absent types are
 * refused, but in SNAPSHOT_TYPES_ALL), concatenated in type order. flag
 * is the option that chooses them, named in messages; when it is not
 * NULL and types is not SNAPSHOT_TYPES_DEFAULT, a note on stderr names
 * the types and counts read. */
int snapshot_read_types(const char *path, uint64_t types, const char *flag,
                        snapshot *out);

/* The value of the attribute name in attrs[0 .. count), or NULL. */
const char *snapshot_attr_find(const snapshot_attr *attrs, size_t count,
                               const char *name);

void snapshot_free(snapshot *s);

/* 1 when path holds the HDF5 signature where the HDF5 format puts it: at
 * offset 0, or after a user block at 512, 1024, 2048, ... bytes; 0
 * otherwise (also when it cannot be read). */
int snapshot_is_hdf5(const char *path);

/* What the writer and the reader share. */

/* 1 when every body's coordinates, velocity and mass are finite and its
 * mass > 0; else prints "tilefmm: PATH: body I (ParticleID ID) has ..."
 * for the first that is not and returns 0. */
int snapshot_check(const char *path, const snapshot *s);

/* Called first by snapshot_write and snapshot_read, and by anything else
 * that calls HDF5 before them: silences HDF5's printing of errors (they
 * are reported by the caller) and keeps HDF5 from installing its exit
 * handler, which crashes after a failed close (see snapshot.c). */
void snapshot_hdf5_init(void);

/* HDF5's reason for the failure of the latest HDF5 call, in buf
 * (strerror's text when a system call failed). Call it straight after
 * the failing call: the next HDF5 call clears HDF5's error stack. */
#define SNAPSHOT_REASON_SIZE 256
const char *snapshot_hdf5_reason(char buf[SNAPSHOT_REASON_SIZE]);

#endif
