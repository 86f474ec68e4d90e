/* The object behind sim_gpu.h, shared by sim_gpu.cu (the state, the
 * kicks, the drift) and sim_gpu_diag.cu (the diagnostics, the
 * snapshots). */
#ifndef TFMM_SIM_GPU_STATE_CUH
#define TFMM_SIM_GPU_STATE_CUH

#include "base/error.h"
#include "gpu_context.h"

#include <cuda_runtime.h>
#include <stddef.h>

/* What the opening kick and activate reduce: the smallest bin and a
 * count. */
struct tfmm_sim_gpu_counts {
  int min_bin;
  unsigned long long count;
};

/* A sum carried as an unevaluated pair: the value is s + c. */
struct tfmm_sim_gpu_pair {
  double s, c;
};

/* The 12 sums of the diagnostics, in the order of diagnostics.c: mass,
 * kinetic, potential, momentum (3), angular momentum (3), mass times
 * position (3). */
enum { TFMM_SIM_GPU_SUMS = 12 };
struct tfmm_sim_gpu_sums {
  tfmm_sim_gpu_pair q[TFMM_SIM_GPU_SUMS];
};

/* Where the state lives in its context's arena (arena.h): the device
 * slots from TFMM_SLOTS_SIM, the pinned ones from TFMM_PINNED_SIM. */
enum tfmm_sim_gpu_slot {
  TFMM_SIM_SLOT_POS = TFMM_SLOTS_SIM,
  TFMM_SIM_SLOT_VEL,
  TFMM_SIM_SLOT_ACC,
  TFMM_SIM_SLOT_MASS,
  TFMM_SIM_SLOT_POT,
  TFMM_SIM_SLOT_BIN,
  TFMM_SIM_SLOT_ACTIVE,
  TFMM_SIM_SLOT_COUNTS,
  TFMM_SIM_SLOT_SUMS,
  TFMM_SIM_SLOT_HIST,
  TFMM_SIM_SLOT_SCRATCH, /* CUB's, grown as the diagnostics ask */
  TFMM_SIM_SLOT_SHADOW,
  TFMM_SIM_SLOT_DIRECT, /* tfmm_sim_gpu_direct's (sim_gpu_direct.cu) */
  TFMM_SIM_SLOT_END
};
enum tfmm_sim_gpu_pinned {
  TFMM_SIM_PINNED_COUNTS = TFMM_PINNED_SIM,
  TFMM_SIM_PINNED_SUMS,
  TFMM_SIM_PINNED_HIST,
  TFMM_SIM_PINNED_SHADOW, /* two: the snapshots alternate */
  TFMM_SIM_PINNED_END = TFMM_SIM_PINNED_SHADOW + 2
};
static_assert(TFMM_SIM_SLOT_END <= TFMM_SLOTS_SIM + TFMM_SLOTS_SIM_COUNT,
              "arena.h: too few device slots for the simulation");
static_assert(TFMM_SIM_PINNED_END <= TFMM_PINNED_SIM + TFMM_PINNED_SIM_COUNT,
              "arena.h: too few pinned slots for the simulation");

/* The arrays point into slots of gpu's arena, and the streams are gpu's:
 * the context owns them all and outlives the object. */
struct tfmm_sim_gpu {
  tfmm_gpu *gpu;
  int device, sm_count;
  size_t n;
  cudaStream_t stream;      /* every call's work: gpu's STEP stream */
  cudaStream_t copy_stream; /* the snapshots' copies to the host: its COPY */
  double *pos, *vel, *mass, *acc, *pot;
  signed char *bin;
  unsigned char *active;
  tfmm_sim_gpu_counts *d_counts, *h_counts; /* device, pinned host */
  tfmm_sim_gpu_sums *d_sums, *h_sums;       /* device, pinned host */
  unsigned long long *d_hist, *h_hist;      /* bodies per bin: device, pinned */
  /* The snapshots: pos, vel, acc, pot (10n doubles), then bin (n bytes),
   * on the device (shadow) and in two pinned host buffers, used in turn
   * (h_shadow[copied], the last one copied to), reserved at the first
   * snapshot. shadow_done: the shadow is written (stream); copy_done: it
   * is on the host (copy_stream); warmed: the second buffer has been
   * copied to once, at the first snapshot (so that nothing of either
   * buffer's first use falls mid-run; what the reservation costs, 0.5-0.7
   * s a buffer at 16M bodies on the H200 machine, was measured, a first
   * copy's share of it was not). */
  void *d_shadow, *h_shadow[2];
  cudaEvent_t shadow_done, copy_done;
  int snapshot_begun, copied, warmed;
};

/* TFMM_ERR_INVALID_ARGUMENT for a NULL object. */
static inline tfmm_status tfmm_sim_gpu_check(const tfmm_sim_gpu *g,
                                             tfmm_error *err) {
  if (g == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: the object is NULL");
  return TFMM_OK;
}

#endif
