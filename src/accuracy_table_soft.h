/* The softened far field's calibration (tfmm_config.far_kernel
 * softened; accuracy_table.h's rows are Newton's with the separation):
 * per opening angle and order, the worst 99th-percentile relative
 * acceleration error over the inputs of bench/results/soft_expansion
 * (Plummer sphere, clusters, line + coincident pile; eps 0.001 and 0.01;
 * 20,000 and 50,000 bodies; leaf 48; near field in double; truth: 1,000
 * bodies summed directly in double), and the cost of an evaluation
 * relative to theta 0.5, order 4 of the same input (geometric mean; one
 * thread, CPU seconds). A first table from that bench's grid, not from
 * bench/calibrate_accuracy. Written by
 * bench/results/soft_expansion/soft_rows.py (do not edit by hand). */
#ifndef TFMM_ACCURACY_TABLE_SOFT_H
#define TFMM_ACCURACY_TABLE_SOFT_H

#include "accuracy_table.h"

static const tfmm_accuracy_row TFMM_ACCURACY_TABLE_SOFT[] = {
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 4, 3.45e-02, 2.44, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 5, 2.89e-02, 3.2, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 6, 1.59e-03, 4.47, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 7, 1.00e-03, 5.83, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 8, 1.00e-04, 8.8, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 10, 3.65e-06, 20.3, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.3, 12, 2.27e-07, 43.9, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 4, 7.26e-02, 1.51, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 5, 1.03e-01, 2.13, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 6, 6.95e-03, 3.09, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 7, 6.49e-03, 4.71, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 8, 7.20e-04, 7.21, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 10, 6.14e-05, 15.9, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.4, 12, 5.81e-06, 31.9, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 4, 3.51e-01, 1, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 5, 2.77e-01, 1.43, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 6, 5.42e-02, 2.17, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 7, 3.70e-02, 3.21, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 8, 8.17e-03, 4.98, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.5, 10, 1.55e-03, 10.3, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 4, 1.05e+00, 0.607, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 5, 1.02e+00, 0.895, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 6, 2.40e-01, 1.43, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 7, 2.31e-01, 2.33, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 8, 5.83e-02, 3.49, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.6, 10, 8.39e-03, 7.4, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 4, 1.23e+00, 0.423, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 5, 1.73e+00, 0.64, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 6, 3.69e-01, 0.976, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 7, 4.43e-01, 1.56, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 8, 1.22e-01, 2.38, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.7, 10, 3.32e-02, 5.14, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 4, 1.24e+00, 0.301, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 5, 1.71e+00, 0.467, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 6, 3.78e-01, 0.708, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 7, 4.43e-01, 1.15, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 8, 1.21e-01, 1.82, 48, 0, 0},
    {TFMM_METHOD_FMM, TFMM_MAC_GEOMETRIC, 0.8, 10, 3.31e-02, 3.82, 48, 0, 0},
};

#endif
