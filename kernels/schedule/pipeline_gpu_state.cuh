/* The gpu schedule's state (pipeline_gpu.cu, pipeline_gpu_bodies.cu): its
 * buffers, pinned copies and events, and the helpers both files use. A
 * private header of kernels/schedule; CUDA_TRY_WHO and cuda_try.cuh come
 * first. */
#ifndef TFMM_PIPELINE_GPU_STATE_CUH
#define TFMM_PIPELINE_GPU_STATE_CUH

#include "gpu_context.h"
#include "pipeline_gpu.h"

#include <cuda_runtime.h>

#include <new>
#include <stdint.h>

/* Memory. The far field's phi (n) and grad (3n) go where the bodies were
 * uploaded (the tree's input, its BODIES slot, 4n doubles, dead once the
 * tree is built; the caller's device bodies are scaled into it). The
 * stages' scratch is taken from the memory the traversal lends once its
 * lists are made (tfmm_traverse_gpu_spare): the near field's results
 * first, which live until finish, then each stage's own scratch after
 * them, the stages sharing that memory since they run one after the other
 * on the stream (near: its bodies, leaves, entries and counts; far: L and
 * the scaled multipoles; finish: the results). What does not fit is
 * given a buffer of its own below: a slot of the context's SCHEDULE group
 * (arena.h), as the pinned copies are of TFMM_PINNED_SCHEDULE. */
struct tfmm_pipeline_gpu_state {
  enum {
    BODY, /* the near field's */
    CENTRE,
    FRAME, /* the leaves' reaches and scales (near_frame.h) */
    LEAF_BEGIN,
    POSITION,
    LIST_LEAF,
    ENTRY_BODIES,
    ITEMS, /* the counts, then their scans: three arrays of nleaves + 1 */
    ITEM,
    SPLIT,
    NEAR_OUT,
    NEAR_WORK,
    SCAN_TEMP,
    FAR_L,
    FAR_MS,          /* the float M2L's scaled multipoles */
    RESULT,          /* acc (3n), then pot (n): the device's outputs */
    BOUNDS,          /* the caller's device bodies' bounds */
    ACTIVE,          /* the targets' mask uploaded from the host (n bytes) */
    BELOW,           /* the targets among sorted bodies [0, k), k = 0..n */
    TARGETS,         /* the targets of each cell */
    TARGET_SUM,      /* their count */
    CHECKS,          /* two first-invalid indices, equal keys, leaf min, max */
    MEASURE_TARGETS, /* the measured sample's sorted indices (measure_gpu.cu) */
    MEASURE_WORK,    /* the reference's partial sums */
    MEASURE_OUT,     /* the sample's input indices, exact and computed acc */
    SOFT_M,          /* the softened far field's multipoles (soft_far_gpu.h) */
    BUFFERS
  };
  tfmm_device_buffer *buf = nullptr;  /* the context's SCHEDULE slots */
  unsigned long long *host = nullptr; /* pinned: CHECKS copied back */
  enum { CHECK_VALUES = 5 };
  int64_t *host_totals = nullptr; /* pinned: the item totals */
  enum {
    EV_START,
    EV_UPLOADED,
    EV_TREE,
    EV_UPWARD,
    EV_LISTS,
    EV_NEAR,
    EV_FAR,
    EV_END,
    EV_SIDE, /* the upward stream's last work, for a wait on all of it */
    EVS
  };
  cudaEvent_t ev[EVS] = {};
  int recorded[EVS] = {};
  double upload_ms = 0;
  tfmm_gpu_near_size near_size{};
  tfmm_precision precision = TFMM_PRECISION_SINGLE;
  int potential = 0;
  int device = 0;           /* where the events are (the context's device) */
  void *near_out = nullptr; /* the near field's results (4n) */
  size_t near_out_bytes = 0;
  /* The far field runs on the upward stream beside the near field: the
   * lent memory it took (the near field takes what follows) and the
   * traversal run it was taken for. */
  tfmm_traverse_gpu_region far_lent_r[TFMM_TRAVERSE_GPU_SPARES] = {};
  size_t far_lent_used[TFMM_TRAVERSE_GPU_SPARES] = {};
  int far_lent_count = 0;
  uint64_t far_run = 0;
  int far_taken = 0;
  uint64_t near_run = 0; /* the traversal run the near field followed */
  const unsigned char *active = nullptr; /* the targets' mask on the
                                            device, or NULL: every body */
  int64_t target_cells = 0; /* cells holding a target (with active) */
  int soft_order = -1;      /* the order of SOFT_M's multipoles, or -1: none */
  size_t measure_slots = 0; /* the last sample's m (measure_gpu.cu) */
  size_t uploaded = 0;      /* bodies in the tree's buffer (upload), or 0 */
  /* Between finish and download: where the results are and go. */
  int finished = 0;
  tfmm_pipeline_gpu_output out{};
  double *d_acc = nullptr, *d_pot = nullptr;
};

namespace {

using State = tfmm_pipeline_gpu_state;
static_assert((int)State::BUFFERS <= (int)TFMM_SLOTS_SCHEDULE_COUNT,
              "the state's buffers fit the SCHEDULE group of the arena");

template <class T> T *at(State *s, int k) { return (T *)s->buf[k].p; }

inline tfmm_status reserve(State *s, int k, size_t bytes, tfmm_error *err) {
  TRY(tfmm_device_buffer_reserve(&s->buf[k], bytes > 0 ? bytes : 1));
  return TFMM_OK;
}

inline cudaStream_t stream_of(tfmm_pipeline_gpu *pl) {
  return (cudaStream_t)tfmm_tree_gpu_hybrid_stream(&pl->base);
}

inline tfmm_status make_state(tfmm_pipeline_gpu *pl, tfmm_error *err) {
  if (pl->state != nullptr)
    return TFMM_OK;
  State *s = new (std::nothrow) State();
  if (s == nullptr)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the gpu schedule's state");
  pl->state = s;
  tfmm_gpu *g = pl->base.gpu;
  s->device = tfmm_gpu_device(g);
  s->buf = tfmm_arena_slot(g, TFMM_SLOTS_SCHEDULE);
  void *host = nullptr, *totals = nullptr;
  CHECK(tfmm_arena_pinned(g, TFMM_PINNED_SCHEDULE,
                          State::CHECK_VALUES * sizeof *s->host, 0, &host,
                          err));
  CHECK(tfmm_arena_pinned(g, TFMM_PINNED_SCHEDULE + 1,
                          3 * sizeof *s->host_totals, 0, &totals, err));
  s->host = (unsigned long long *)host;
  s->host_totals = (int64_t *)totals;
  for (int k = 0; k < State::EVS; k++)
    TRY(cudaEventCreate(&s->ev[k]));
  return TFMM_OK;
}

/* Runs f(pl, err) with the pipeline's device current. */
template <class F>
tfmm_status entered(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu, tfmm_error *err,
                    F f) {
  int previous = -1;
  tfmm_status st = tfmm_tree_gpu_hybrid_enter(&pl->base, gpu, &previous, err);
  if (st == TFMM_OK)
    st = make_state(pl, err);
  if (st == TFMM_OK)
    st = f();
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

} // namespace

#endif
