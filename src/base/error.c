#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

tfmm_status tfmm_error_set(tfmm_error *err, tfmm_status status, const char *fmt,
                           ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return status;
}
