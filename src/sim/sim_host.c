/* The kicks of individual time steps on the host (tilefmm.h, "The
 * simulation"): the opening half kick with the new bin of each body whose
 * step ended, the closing half kick of each body whose step ends, and the
 * active set. Element-wise, so the bits do not depend on the thread count;
 * the GPU's (kernels/sim/sim_gpu.cu) give the same bits. */
#include "sim/sim.h"

#include "team.h"

#include <string.h>

static void kick(double *v, const double *a, double h) {
  for (int d = 0; d < 3; d++)
    v[d] += h * a[d];
}

int64_t tfmm_sim_host_open(tfmm_sim *s, int sync_bin, int limit) {
  const ptrdiff_t n = (ptrdiff_t)s->n;
  const int team = tfmm_team(s->n, TFMM_GRAIN_BODIES);
  int64_t shorter = 0;
#pragma omp parallel for schedule(static) num_threads(team) reduction(+ : shorter)
  for (ptrdiff_t i = 0; i < n; i++) {
    if (s->bin[i] > sync_bin)
      continue;
    const double *a = s->acc + 3 * i;
    if (s->individual) {
      int asked_less = 0;
      s->bin[i] = (signed char)tfmm_timestep_bin(
          a[0], a[1], a[2], s->two_eta_eps, s->tick, limit, &asked_less);
      shorter += asked_less;
    }
    kick(s->vel + 3 * i, a, tfmm_timestep_half(s->bin[i], s->tick));
  }
  memset(s->bin_count, 0, sizeof s->bin_count);
  for (ptrdiff_t i = 0; i < n; i++)
    s->bin_count[s->bin[i]]++;
  return shorter;
}

void tfmm_sim_host_close(tfmm_sim *s, int active_bin) {
  const ptrdiff_t n = (ptrdiff_t)s->n;
  const int team = tfmm_team(s->n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (ptrdiff_t i = 0; i < n; i++)
    if (s->bin[i] <= active_bin)
      kick(s->vel + 3 * i, s->acc + 3 * i,
           tfmm_timestep_half(s->bin[i], s->tick));
}

size_t tfmm_sim_host_activate(tfmm_sim *s, int active_bin) {
  size_t count = 0;
  for (size_t i = 0; i < s->n; i++) {
    s->active[i] = s->bin[i] <= active_bin;
    count += s->active[i];
  }
  return count;
}
