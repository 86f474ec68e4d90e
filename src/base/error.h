/* The ground floor, with base/clock.h: how every layer reports a failure.
 * A stage formats its message into a tfmm_error and returns a status; it
 * never prints, so it stays usable without a solver. Plain C, included by
 * the CUDA sources too. */
#ifndef TFMM_ERROR_H
#define TFMM_ERROR_H

#include "tilefmm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFMM_MESSAGE_SIZE 512

/* An error message buffer; stages report failures through one of these so
 * that they never print and stay usable without a solver. */
typedef struct tfmm_error {
  char message[TFMM_MESSAGE_SIZE];
} tfmm_error;

/* Formats the message into err (if not NULL) and returns status. */
tfmm_status tfmm_error_set(tfmm_error *err, tfmm_status status, const char *fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
