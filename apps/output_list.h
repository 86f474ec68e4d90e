/* An output list, as SWIFT's Snapshots:output_list and GADGET-4's
 * OutputListFilename give one: the times at which a run writes its
 * snapshots, one a line in the run's time unit, '#' starting a comment.
 * A snapshot at a listed time is the state at the synchronisation point
 * before it (or on it) carried to that time (output_list_due), as SWIFT
 * and GADGET-4 drift their particles to an output time: the run's own
 * steps do not change. */
#ifndef TFMM_OUTPUT_LIST_H
#define TFMM_OUTPUT_LIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct output_list {
  double *times; /* n, strictly increasing, finite, >= the start */
  size_t n;
  size_t next;  /* the first not yet written */
  double start; /* the run's start time (time_initial) */
  double step;  /* the run's step (dt_max with individual steps) */
} output_list;

/* Reads path: each line a time (a number, surrounded by spaces or tabs
 * at most) or nothing, '#' and what follows it a comment; SWIFT's header
 * "# Redshift" or "# Scale Factor" is refused (tilefmm has no cosmology).
 * Every time must be finite, after the one before and not before start.
 * Prints "tilefmm: PATH:LINE: what is wrong" (or PATH: for the file as a
 * whole) and returns 0; fills *l (release with output_list_free) and
 * returns 1 otherwise. */
int output_list_read(const char *path, double start, double step,
                     output_list *l);

void output_list_free(output_list *l);

/* The synchronisation point (steps from the start) a listed time belongs
 * to: the last at or before it, a time within 1e-9 steps below a point
 * counting as on it (tfmm_sim_advance_to's rule). */
int64_t output_list_point(const output_list *l, size_t k);

/* Skips the times whose point is at or before step (written before a
 * checkpoint at step: a restart continues with the rest). */
void output_list_skip_to(output_list *l, int64_t step);

/* The next time due at synchronisation point step (its point at or
 * before step, and not after the run's end, the point last_step): 1 with
 * its index (the snapshot's number) in *index and the time in *at, the
 * list moved past it; 0 when none is due. */
int output_list_due(output_list *l, int64_t step, int64_t last_step,
                    size_t *index, double *at);

/* How many times lie after the point last_step (the run's end): those the
 * run will not write. */
size_t output_list_after(const output_list *l, int64_t last_step);

#endif
