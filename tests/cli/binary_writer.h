/* An independent writer of Tipsy and GADGET-2 binary files for the tests
 * of the tool's readers: bytes put one by one in the order asked, with
 * the layouts written out from the formats' descriptions (Tipsy's
 * tipsydefs.h, the GADGET-2 user guide, section 6), not from apps/. */
#ifndef TFMM_BINARY_WRITER_H
#define TFMM_BINARY_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* A growing buffer of bytes, numbers put in one byte order. */
typedef struct bytes {
  unsigned char *b;
  size_t len, cap;
  int little;
} bytes;

void bytes_u32(bytes *o, uint32_t v);
void bytes_u64(bytes *o, uint64_t v);
void bytes_f32(bytes *o, double v); /* as a float */
void bytes_f64(bytes *o, double v);
void bytes_raw(bytes *o, const void *p, size_t len);
void bytes_free(bytes *o);
/* Writes the buffer to path (a full path) and frees it. */
void bytes_save(bytes *o, const char *path);

/* Bodies of GADGET's six types. */
#define NTYPES 6
typedef struct body {
  double x[3], v[3], m;
  uint64_t id;
} body;
typedef struct model {
  size_t n[NTYPES];
  body *b[NTYPES];
} model;

/* count[k] random bodies of each type k: coordinates and velocities in
 * (-1, 1), masses in (0.5, 1.5), IDs 1000 + place; when single, every
 * value is a float's, so that it survives a float file. */
model model_random(const size_t *count, uint64_t seed, int single);
void model_free(model *m);
/* The bodies of the types in mask (bit k: type k), in type order, as a
 * text body file "x y z m vx vy vz" at path; returns how many. */
size_t model_write_text(const model *m, unsigned mask, const char *path);
/* With the same mass for every body of type k (for a massarr table). */
void model_same_mass(model *m, int k, double mass);

/* A Tipsy file of the gas (type 0), dark (1) and star (4) bodies, after
 * a header of 32 bytes (28 when !pad), big-endian unless little. */
void tipsy_write(const model *m, double time, int little, int pad,
                 const char *path);

/* GADGET-2 snapshot options, and where its blocks' data went. */
typedef struct gadget_options {
  int format;               /* 1 or 2 */
  int little;               /* byte order */
  int real_width, id_width; /* 4 or 8 */
  double massarr[NTYPES];   /* > 0: the type's mass; 0: in block MASS */
  int num_files;            /* 1 unless a part */
  uint64_t total[NTYPES];   /* npartTotal; counts of m when all zero */
  double time, redshift;
  int no_vel, no_id; /* format 2: blocks left out */
} gadget_options;
typedef struct gadget_layout {
  size_t head, pos, vel, id, mass; /* byte offsets of the blocks' data */
  size_t size;
} gadget_layout;

gadget_options gadget_defaults(void);
void gadget_write(const model *m, const gadget_options *o, const char *path,
                  gadget_layout *where);

#endif
