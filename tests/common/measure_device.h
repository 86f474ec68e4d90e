/* Where a measure suite runs: built twice, as test_X on the CPU and as
 * test_X_gpu with TFMM_MEASURE_GPU on the device (skipping without a
 * GPU). */
#ifndef TFMM_TEST_MEASURE_DEVICE_H
#define TFMM_TEST_MEASURE_DEVICE_H

#include "testutil.h"

#ifdef TFMM_MEASURE_GPU
#define DEVICE TFMM_DEVICE_GPU
#define REQUIRE_DEVICE() test_require_gpu()
#else
#define DEVICE TFMM_DEVICE_CPU
#define REQUIRE_DEVICE() ((void)0)
#endif

#endif
