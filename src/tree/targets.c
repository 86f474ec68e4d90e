#include "tree/targets.h"

#include "team.h"

#include <stdlib.h>

int tfmm_targets_per_cell(const tfmm_octree *t, const unsigned char *active,
                          int32_t *count) {
  /* below[k] = the active bodies among sorted bodies [0, k). */
  int32_t *below = malloc((t->n + 1) * sizeof *below);
  if (below == NULL)
    return -1;
  below[0] = 0;
  for (size_t k = 0; k < t->n; k++)
    below[k + 1] = below[k] + (active[t->order[k]] != 0);
  const int team = tfmm_team(t->ncells, TFMM_GRAIN_CELLS);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t c = 0; c < t->ncells; c++)
    count[c] = below[t->cells[c].body_end] - below[t->cells[c].body_begin];
  free(below);
  return 0;
}
