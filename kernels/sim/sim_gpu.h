/* A simulation's state on the GPU: the bodies, their forces and their time
 * bins kept in device memory between steps, and the element-wise parts of
 * a step done there, for tfmm_sim (src/sim) when its solver runs on the
 * GPU. Implemented by kernels/sim/sim_gpu.cu, or by kernels/none/sim_gpu_none.c
 * in a build without CUDA (every call TFMM_ERR_UNSUPPORTED there).
 *
 * Bits: the kicks and the drift are the CPU's `v[k] += h * a[k]` and
 * `x[k] += h * v[k]` (src/sim/leapfrog.c), each product and sum rounded on
 * its own (sim_gpu.cu is compiled without fused multiply-add), with h =
 * tfmm_timestep_half(bin, tick) for a kick and the caller's h for a drift;
 * a body's new bin is tfmm_timestep_bin (src/sim/timestep.h), the
 * formula the CPU uses. A state stepped here is therefore the state the
 * CPU gives from the same forces, bit for bit.
 *
 * Every call is ordered on the object's stream (tfmm_sim_gpu_stream), so
 * the caller's kernels on that stream (the force evaluation) see the
 * state of the calls before them. Calls that return values to the host
 * (open, activate, diagnostics, download) wait for the stream; the kicks
 * and the drift return without waiting. Failures return a status with a
 * message in err; a failed object may only be destroyed. */
#ifndef TFMM_SIM_GPU_H
#define TFMM_SIM_GPU_H

#include "arena.h"
#include "base/error.h"
#include "base/pair.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfmm_sim_gpu tfmm_sim_gpu;

/* n >= 1 bodies on the device of context gpu (gpu.h), their arrays in
 * its arena (arena.h: TFMM_SLOTS_SIM, TFMM_PINNED_SIM): pos, vel, acc (3n
 * doubles each, xyz per body), mass, pot (n doubles), bin (n signed
 * chars), active (n unsigned chars); its stream is gpu's STEP stream, the
 * snapshots' copies go on its COPY stream. acc and pot hold NaN until
 * uploaded, bins 0, active 0. One state a context at a time
 * (TFMM_ERR_INVALID_ARGUMENT for a second); gpu must outlive g. */
tfmm_status tfmm_sim_gpu_create(tfmm_sim_gpu **out, tfmm_gpu *gpu, size_t n,
                                tfmm_error *err);
/* Waits for g's work on both streams and gives its slots back to the
 * context; the streams stay the context's. */
void tfmm_sim_gpu_destroy(tfmm_sim_gpu *g);

/* The device arrays (in the context's arena) and the stream (a
 * cudaStream_t, the context's STEP stream); NULL for NULL. */
size_t tfmm_sim_gpu_count(const tfmm_sim_gpu *g);
double *tfmm_sim_gpu_pos(tfmm_sim_gpu *g);
double *tfmm_sim_gpu_vel(tfmm_sim_gpu *g);
double *tfmm_sim_gpu_mass(tfmm_sim_gpu *g);
double *tfmm_sim_gpu_acc(tfmm_sim_gpu *g);
double *tfmm_sim_gpu_pot(tfmm_sim_gpu *g);
signed char *tfmm_sim_gpu_bin(tfmm_sim_gpu *g);
unsigned char *tfmm_sim_gpu_active(tfmm_sim_gpu *g);
void *tfmm_sim_gpu_stream(tfmm_sim_gpu *g);

/* Copies a state from the host and waits. pos, vel, mass are required;
 * acc and pot may be NULL (then NaN: forces unknown), bin NULL (then all
 * 0). Each bin must lie in [0, TFMM_TIMESTEP_MAX_BIN]
 * (TFMM_ERR_INVALID_ARGUMENT otherwise, naming the body, and nothing is
 * copied). active is cleared. */
tfmm_status tfmm_sim_gpu_upload(tfmm_sim_gpu *g, const double *pos,
                                const double *vel, const double *mass,
                                const double *acc, const double *pot,
                                const signed char *bin, tfmm_error *err);

/* Copies the state to the host and waits; a NULL destination is skipped.
 * The mass never changes on the device: the caller's copy is the mass. */
tfmm_status tfmm_sim_gpu_download(tfmm_sim_gpu *g, double *pos, double *vel,
                                  double *acc, double *pot, signed char *bin,
                                  tfmm_error *err);

/* The opening half-kicks of the bodies whose step begins now, those with
 * bin <= sync_bin: with individual != 0 each first takes the bin
 * tfmm_timestep_bin(a, two_eta_eps, tick, limit_bin) (limit_bin in [0,
 * TFMM_TIMESTEP_MAX_BIN]: the caller's min(max_bin, aligned bin)); then
 * v += h a with h = tfmm_timestep_half(bin, tick). With individual == 0
 * the bins are kept (two_eta_eps and limit_bin unused). *min_bin gets the
 * smallest bin of all the bodies afterwards, *short_steps the number of
 * kicked bodies whose criterion asked for less than one tick (0 when
 * individual == 0). tick finite and > 0. Waits for the stream. */
tfmm_status tfmm_sim_gpu_open(tfmm_sim_gpu *g, int sync_bin, int individual,
                              double two_eta_eps, double tick, int limit_bin,
                              int *min_bin, int64_t *short_steps,
                              tfmm_error *err);

/* The bodies in each bin: counts[b] for b = 0 .. TFMM_TIMESTEP_MAX_BIN.
 * Waits for the stream. */
tfmm_status tfmm_sim_gpu_bins(tfmm_sim_gpu *g, int64_t *counts,
                              tfmm_error *err);

/* pos += h vel for every body. Enqueued; returns without waiting. */
tfmm_status tfmm_sim_gpu_drift(tfmm_sim_gpu *g, double h, tfmm_error *err);

/* active[i] = (bin[i] <= active_bin), the bodies whose forces the next
 * evaluation computes; *count gets their number. Waits for the stream. */
tfmm_status tfmm_sim_gpu_activate(tfmm_sim_gpu *g, int active_bin,
                                  size_t *count, tfmm_error *err);

/* The forces at the k bodies that tfmm_sim_gpu_activate marked (k its
 * count), summed directly over every body in double precision with the
 * softening of pair (G = 1, times G after; tfmm_gpu_reference_at's pair
 * formula, the CPU reference's), into their slots of acc and pot; the
 * others' untouched. For sub-steps of so few active bodies that k n pairs
 * cost less than a tree's evaluation. Waits for the stream; a force not
 * finite is an error naming its body. */
tfmm_status tfmm_sim_gpu_direct(tfmm_sim_gpu *g, size_t k, double G,
                                const tfmm_pair_params *pair, tfmm_error *err);

/* The closing half-kicks of the bodies whose step ends now, those with
 * bin <= active_bin: v += tfmm_timestep_half(bin, tick) a. tick finite
 * and > 0. Enqueued; returns without waiting. */
tfmm_status tfmm_sim_gpu_close(tfmm_sim_gpu *g, int active_bin, double tick,
                               tfmm_error *err);

/* The conserved quantities of the state, by the definitions of
 * tfmm_diagnostics_compute (src/sim/diagnostics.c): each body's terms
 * formed as there, then summed on the device in double with Knuth's
 * TwoSum carried through a CUB reduction (the same bits run to run on one
 * device; not necessarily the CPU's bits). Each of the 12 sums S is
 * within TERM u sum_i |t_i| + SUM u |S| of the exact sum of the exact
 * terms (u = 2^-53; TERM and SUM below), where |t_i| is |m_i| (|x_1 v_2|
 * + |x_2 v_1|) for a component of m x cross v (and likewise) and the
 * term's absolute value for the others: the terms' own roundings give at
 * most 4 u |t_i| (the kinetic energy's four, three for L), the summation
 * one rounding of S and O(n u^2 sum |t_i|) (tests/test_sim_gpu.c derives
 * it and checks it, with the derived bounds of E, 2K/|W| and the centre
 * of mass). Waits for the stream. */
#define TFMM_SIM_GPU_DIAG_TERM 6.0
#define TFMM_SIM_GPU_DIAG_SUM 2.0
tfmm_status tfmm_sim_gpu_diagnostics(tfmm_sim_gpu *g, tfmm_diagnostics *out,
                                     tfmm_error *err);

/* A snapshot copied out while the steps go on: _begin copies pos, vel,
 * acc, pot and bin on the stream into a device shadow (so later kicks and
 * drifts on the stream cannot change what is copied), then from the
 * shadow into pinned host buffers on the context's COPY stream, and
 * returns at once. The first call reserves the shadow and the pinned
 * buffers in the arena (10n doubles and n bytes each). A second _begin
 * before the first's copy is done waits for it on the device, not on the
 * host. */
tfmm_status tfmm_sim_gpu_snapshot_begin(tfmm_sim_gpu *g, tfmm_error *err);

/* Waits for the last _begin's copy; the pointers (any may be NULL to
 * skip) then get the pinned host arrays of the state as it was at that
 * _begin, valid until the next _begin or the destruction of g.
 * TFMM_ERR_INVALID_ARGUMENT if no snapshot was begun. */
tfmm_status tfmm_sim_gpu_snapshot_wait(tfmm_sim_gpu *g, const double **pos,
                                       const double **vel, const double **acc,
                                       const double **pot,
                                       const signed char **bin,
                                       tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
