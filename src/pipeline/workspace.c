#include "pipeline/workspace.h"

#include <stdlib.h>
#include <string.h>

/* Room for count elements of size bytes in *v (capacity *cap, in
 * elements): a fresh array when it is too small, the contents not kept. */
static int reserve(void **v, size_t *cap, size_t count, size_t size) {
  if (count <= *cap && *v != NULL)
    return 0;
  void *fresh = malloc((count > 0 ? count : 1) * size);
  if (fresh == NULL)
    return -1;
  free(*v);
  *v = fresh;
  *cap = count;
  return 0;
}

int tfmm_doubles_reserve(tfmm_doubles *d, size_t count) {
  void *v = d->v;
  const int r = reserve(&v, &d->cap, count, sizeof *d->v);
  d->v = v;
  return r;
}

int tfmm_int32s_reserve(tfmm_int32s *d, size_t count) {
  void *v = d->v;
  const int r = reserve(&v, &d->cap, count, sizeof *d->v);
  d->v = v;
  return r;
}

void tfmm_workspace_clear(tfmm_workspace *w) {
  tfmm_octree_free(&w->tree);
  tfmm_lists_free(&w->lists);
}

void tfmm_workspace_release(tfmm_workspace *w) {
  if (w == NULL)
    return;
  tfmm_workspace_clear(w);
  tfmm_doubles *all[] = {&w->theta_src, &w->accel, &w->M,      &w->L,
                         &w->far_phi,   &w->far_g, &w->near_a, &w->near_p};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++)
    free(all[k]->v);
  free(w->targets.v);
  tfmm_pipeline_gpu_release(&w->gpu);
  memset(w, 0, sizeof *w);
}
