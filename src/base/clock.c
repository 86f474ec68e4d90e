#include "base/clock.h"

#include <omp.h>

double tfmm_wtime(void) { return omp_get_wtime(); }
