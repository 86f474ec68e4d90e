/* The one arena of a device context (gpu_context.h): every buffer the
 * library keeps on a device between calls, and every pinned host buffer
 * that stages its copies, is a named slot of the context that owns the
 * device. The owners (the all-pairs kernel, the near field, the tree, the
 * traversal, the gpu schedule, the simulation) take their slots from the
 * groups below, so that one table says where device memory goes, one
 * call (tfmm_arena_bytes) counts it and one call (tfmm_gpu_destroy)
 * releases it.
 *
 * A slot holds at least what was last reserved; it grows (1/slack more
 * room than asked, the contents not kept) and is never shrunk before the
 * context is destroyed. Sizes that depend on the input are found in two
 * calls, as CUB's are: an entry point under kernels/ called with its
 * scratch NULL says how many bytes it needs, the owner reserves them in
 * its slot and calls again.
 *
 * Streams are named for their work: the gpu schedule's stages and the
 * tree's (SOLVE), the near field or all pairs beside it (NEAR), the
 * simulation's kicks and drifts (STEP) and its copies to the host (COPY).
 * Plain C; the context's device must be current (the callers enter it). */
#ifndef TFMM_ARENA_H
#define TFMM_ARENA_H

#include "base/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfmm_gpu tfmm_gpu;

typedef enum tfmm_stream_name {
  TFMM_STREAM_SOLVE,
  TFMM_STREAM_UPWARD, /* the gpu schedule's upward pass, beside the lists */
  TFMM_STREAM_NEAR,
  TFMM_STREAM_STEP,
  TFMM_STREAM_COPY,
  TFMM_STREAMS
} tfmm_stream_name;

/* Device slots: each owner's first slot and how many it may use. */
enum tfmm_slot_group {
  TFMM_SLOTS_DIRECT = 0, /* all pairs: bodies in, results out */
  TFMM_SLOTS_DIRECT_COUNT = 2,
  TFMM_SLOTS_NEAR = TFMM_SLOTS_DIRECT + TFMM_SLOTS_DIRECT_COUNT,
  TFMM_SLOTS_NEAR_COUNT = 8, /* the hybrid near field's arrays */
  TFMM_SLOTS_TREE = TFMM_SLOTS_NEAR + TFMM_SLOTS_NEAR_COUNT,
  TFMM_SLOTS_TREE_COUNT = 4, /* bodies, tree workspace, multipoles, far */
  TFMM_SLOTS_TRAVERSE = TFMM_SLOTS_TREE + TFMM_SLOTS_TREE_COUNT,
  TFMM_SLOTS_TRAVERSE_COUNT = 24,
  TFMM_SLOTS_SCHEDULE = TFMM_SLOTS_TRAVERSE + TFMM_SLOTS_TRAVERSE_COUNT,
  TFMM_SLOTS_SCHEDULE_COUNT = 32, /* the gpu schedule's other buffers */
  TFMM_SLOTS_SIM = TFMM_SLOTS_SCHEDULE + TFMM_SLOTS_SCHEDULE_COUNT,
  TFMM_SLOTS_SIM_COUNT = 16,
  TFMM_SLOTS = TFMM_SLOTS_SIM + TFMM_SLOTS_SIM_COUNT
};

/* Pinned host slots, the same way. */
enum tfmm_pinned_group {
  TFMM_PINNED_DIRECT = 0, /* all pairs: bodies in, results out */
  TFMM_PINNED_DIRECT_COUNT = 2,
  TFMM_PINNED_NEAR = TFMM_PINNED_DIRECT + TFMM_PINNED_DIRECT_COUNT,
  TFMM_PINNED_NEAR_COUNT = 8,
  TFMM_PINNED_TRAVERSE = TFMM_PINNED_NEAR + TFMM_PINNED_NEAR_COUNT,
  TFMM_PINNED_TRAVERSE_COUNT = 4,
  TFMM_PINNED_SCHEDULE = TFMM_PINNED_TRAVERSE + TFMM_PINNED_TRAVERSE_COUNT,
  TFMM_PINNED_SCHEDULE_COUNT = 4,
  TFMM_PINNED_SIM = TFMM_PINNED_SCHEDULE + TFMM_PINNED_SCHEDULE_COUNT,
  TFMM_PINNED_SIM_COUNT = 8,
  /* the two chunks that stage the caller's pageable host arrays
     (host_copy.h) */
  TFMM_PINNED_HOST = TFMM_PINNED_SIM + TFMM_PINNED_SIM_COUNT,
  TFMM_PINNED_HOST_COUNT = 2,
  TFMM_PINNED = TFMM_PINNED_HOST + TFMM_PINNED_HOST_COUNT
};

/* The context's stream of that name (a cudaStream_t), made when the
 * context was opened. */
void *tfmm_gpu_stream(const tfmm_gpu *g, tfmm_stream_name name);

/* Its device (the CUDA ordinal). */
int tfmm_gpu_device(const tfmm_gpu *g);

/* One of the context's two events (a cudaEvent_t, timing off) that mark
 * the chunks of a staged copy (host_copy.h), k 0 or 1. */
void *tfmm_gpu_staging_event(const tfmm_gpu *g, int k);

/* At least `bytes` (0 counts as 1) of device memory in `slot`, with
 * 1/slack more room when it grows (slack 0: none); *p (if not NULL) gets
 * the slot's pointer. The contents are kept only when it does not grow. */
tfmm_status tfmm_arena_reserve(tfmm_gpu *g, int slot, size_t bytes,
                               size_t slack, void **p, tfmm_error *err);

/* The same for a pinned host slot. */
tfmm_status tfmm_arena_pinned(tfmm_gpu *g, int slot, size_t bytes, size_t slack,
                              void **p, tfmm_error *err);

/* A slot's pointer (NULL before it was reserved) and its bytes. */
void *tfmm_arena_at(const tfmm_gpu *g, int slot);
size_t tfmm_arena_slot_bytes(const tfmm_gpu *g, int slot);
void *tfmm_arena_pinned_at(const tfmm_gpu *g, int slot);

/* Releases `count` device slots from `first` (their memory given back). */
void tfmm_arena_free(tfmm_gpu *g, int first, int count);

/* Releases `count` pinned slots from `first`. */
void tfmm_arena_pinned_free(tfmm_gpu *g, int first, int count);

/* Device bytes held by `count` slots from `first` (0, TFMM_SLOTS: all). */
size_t tfmm_arena_bytes(const tfmm_gpu *g, int first, int count);

#ifdef __cplusplus
}
#endif

#endif
