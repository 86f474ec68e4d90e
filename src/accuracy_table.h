/* The calibration behind tfmm_config.accuracy: for each method, opening
 * criterion, opening angle and order, the worst 99th-percentile relative
 * acceleration error measured over the calibration inputs, and the cost
 * of an evaluation relative to fmm at theta 0.5, order 4. How it was
 * measured, on what, and how to redo it: docs/accuracy.md. Written by
 * bench/calibrate_accuracy (do not edit by hand). */
#ifndef TFMM_ACCURACY_TABLE_H
#define TFMM_ACCURACY_TABLE_H

#include "tilefmm.h"

typedef struct tfmm_accuracy_row {
  tfmm_method method;
  tfmm_mac_kind mac;
  double theta;
  int order;
  double error; /* worst p99 over the calibration inputs */
  double cost;  /* relative time of an evaluation */
} tfmm_accuracy_row;

/* PROVISIONAL rows until bench/calibrate_accuracy has run. */
static const tfmm_accuracy_row TFMM_ACCURACY_TABLE[] = {
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 4, 1.2e-2, 1.0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 6, 1.0e-3, 2.0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 8, 1.0e-4, 4.0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 12, 1.0e-6, 8.0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.25, 16, 1.0e-8, 16.0},
    {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0.5, 4, 5.0e-3, 1.0},
    {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0.4, 6, 1.0e-3, 2.0},
    {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0.3, 8, 1.0e-4, 4.0},
    {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0.3, 12, 1.0e-6, 8.0},
    {TFMM_METHOD_BH, TFMM_MAC_GEOMETRIC, 0.25, 16, 1.0e-8, 16.0},
};

#endif
