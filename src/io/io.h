/* What the snapshot readers and the writer share (src/io/): the report
 * their failures go to, the choice of particle types, the checks of a
 * body, and the readers' entry points. Internal to the library. */
#ifndef TFMM_IO_H
#define TFMM_IO_H

#include "tilefmm.h"

#include <stddef.h>
#include <stdint.h>

/* Where a reader or the writer says why it failed: messages, separated by
 * '\n' when there are several, and the status of the first. The public
 * calls copy it into the caller's buffer. */
#define TFMM_IO_REPORT_SIZE 4096
typedef struct tfmm_io_report {
  char text[TFMM_IO_REPORT_SIZE];
  size_t used;
  tfmm_status status; /* TFMM_OK until the first failure */
} tfmm_io_report;

/* Appends a message (TFMM_ERR_FILE unless a status was set before). */
void tfmm_io_fail(tfmm_io_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* tfmm_io_fail with a status of its own (the first failure's stays). */
void tfmm_io_fail_status(tfmm_io_report *r, tfmm_status status, const char *fmt,
                         ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The report's status (TFMM_ERR_FILE when it holds a message but no
 * status), its text copied into message (size bytes, may be NULL). */
tfmm_status tfmm_io_report_finish(const tfmm_io_report *r, char *message,
                                  size_t size);

/* GADGET's particle types: the most a header may hold (GADGET-4 may be
 * built with more than 6). */
#define TFMM_IO_TYPES_MAX 64

/* Chooses among the ntypes counts of path (count[k]: particles of type k,
 * named label followed by k in messages: "PartType" for HDF5's groups,
 * "type " for the binary formats) the types of the mask types
 * (TFMM_TYPES_DEFAULT or _ALL, or bits), and zeroes the counts of the
 * others. flag names the caller's option in messages (NULL: none). When
 * types is not the default, *note (freed by the caller) names the types
 * and counts read. Returns 0, reporting why, when the choice is refused
 * (several types or gas unasked, a type asked for that the file does not
 * hold, no particles). */
int tfmm_io_types_select(tfmm_io_report *r, const char *path, const char *label,
                         int ntypes, uint64_t *count, uint64_t types,
                         const char *flag, char **note);

/* What is wrong with a particle of coordinates x[3], velocity v[3] (NULL:
 * none read) and mass m: "a non-finite coordinate", "a non-finite
 * velocity", "a non-finite mass", "a mass <= 0", or NULL when nothing
 * is. */
const char *tfmm_io_body_fault(const double *x, const double *v, double m);

/* Checks every body of s (tfmm_io_body_fault), naming path, the first at
 * fault, its index and ParticleID; status TFMM_ERR_FILE on read,
 * TFMM_ERR_INVALID_ARGUMENT on write. With extent not NULL, the largest
 * |coordinate| of the bodies (all sound) into *extent, found in the same
 * pass: a writer's box. One pass over the bodies on several threads
 * (io_threads.h). */
int tfmm_io_check_bodies(tfmm_io_report *r, const char *path,
                         const tfmm_snapshot *s, tfmm_status status,
                         double *extent);

/* Keeps path among the files read (out->files). Returns 0 when out of
 * memory (reported). */
int tfmm_io_add_file(tfmm_io_report *r, tfmm_snapshot *out, const char *path);

/* The readers, each into out (zeroed by the caller), reporting why not. */
int tfmm_hdf5_read(tfmm_io_report *r, const char *path,
                   const tfmm_read_options *o, tfmm_snapshot *out);
int tfmm_gadget2_read(tfmm_io_report *r, const char *path,
                      const tfmm_read_options *o, tfmm_snapshot *out);
int tfmm_tipsy_read(tfmm_io_report *r, const char *path,
                    const tfmm_read_options *o, tfmm_snapshot *out);

/* 1 when path holds the HDF5 signature where the HDF5 format puts it: at
 * offset 0, or after a user block at 512, 1024, 2048, ... bytes; 0
 * otherwise (also when it cannot be read). */
int tfmm_snapshot_is_hdf5(const char *path);

/* Whether the first len bytes of a file open a GADGET-2 snapshot: 2 when
 * they hold the 8-byte record naming HEAD (format 2), or a 256-byte
 * record framed by its two markers (format 1); 1 when they hold only the
 * opening marker 256 (a truncated file, for the reader to report); else
 * 0. Either byte order. */
int tfmm_gadget2_probe(const unsigned char *head, size_t len);

/* BASE.0 (to free) when path is the BASE of a snapshot in several files:
 * no file of that name, but one named BASE.0; else NULL. */
char *tfmm_gadget2_first_part(const char *path);

/* 1 when the first len bytes of a file hold a consistent Tipsy header in
 * either byte order. */
int tfmm_tipsy_probe(const unsigned char *head, size_t len);

/* Writes the HDF5 snapshot file (s checked, extent its largest
 * |coordinate| from tfmm_io_check_bodies), naming path in messages. */
int tfmm_hdf5_write(tfmm_io_report *r, const char *path, const char *file,
                    const tfmm_snapshot *s, const tfmm_snapshot_output *o,
                    double extent);

#endif
