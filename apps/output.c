/* Command output to an atomic file or standard output (see output.h). */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include "cli.h"

#include <errno.h>
#include <string.h>

int output_is_stdout(const char *path) {
  return path == NULL || strcmp(path, OUTPUT_STDOUT) == 0;
}

int output_refuse_stdout(const char *flag, const char *path, const char *what) {
  if (path == NULL || strcmp(path, OUTPUT_STDOUT) != 0)
    return 0;
  cli_error("%s %s: %s does not go to standard output, which takes text "
            "alone; name a file (%s FILE)",
            flag, path, what, flag);
  return 1;
}

int output_check(const char *flag, const char *path) {
  return output_is_stdout(path) || atomic_file_check(flag, path);
}

int output_hdf5_name(const char *path) {
  static const char *const ext[] = {".hdf5", ".h5", ".hdf"};
  const size_t len = path != NULL ? strlen(path) : 0;
  for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
    const size_t e = strlen(ext[k]);
    if (len > e && strcmp(path + len - e, ext[k]) == 0)
      return 1;
  }
  return 0;
}

int output_open(output *out, const char *path) {
  memset(out, 0, sizeof *out);
  out->fp = stdout;
  out->name = "standard output";
  if (output_is_stdout(path))
    return 1;
  out->name = path;
  if (!atomic_file_open(&out->af, path))
    return 0;
  out->fp = out->af.fp;
  return 1;
}

void output_discard(output *out) { atomic_file_discard(&out->af); }

void output_fail(output *out) {
  cli_error("%s: cannot write: %s", out->name,
            errno != 0 ? strerror(errno) : "I/O error");
  output_discard(out);
}

int output_close(output *out) {
  if (out->fp != stdout)
    return atomic_file_commit(&out->af);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    output_fail(out);
    return 0;
  }
  return 1;
}
