/* The public face of the snapshot files (tilefmm.h, "Snapshot files"):
 * telling a file's format, reading it with the reader of that format,
 * checking bodies before they are written, and writing atomically. */
#define _POSIX_C_SOURCE 200809L
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A snapshot is read by seeking in it (HDF5's superblock, GADGET-2's
 * parts and blocks, Tipsy's after its header), and opened more than once
 * (told, then read): only a regular file reads the same every time. A
 * pipe or a device would lose what a first look read; such a path is not
 * looked at at all. 0 for a path that names nothing (a GADGET-2 BASE). */
static int not_a_regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

int tfmm_snapshot_is_hdf5(const char *path) {
  if (not_a_regular_file(path))
    return 0;
  static const unsigned char signature[8] = {0x89, 'H',  'D',  'F',
                                             '\r', '\n', 0x1a, '\n'};
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return 0;
  /* The superblock follows a user block of 0, 512, 1024, 2048, ... bytes
   * (HDF5 File Format Specification, section II.A): where HDF5 looks. */
  int found = 0;
  for (long offset = 0; !found && offset <= LONG_MAX / 2;
       offset = offset == 0 ? 512 : 2 * offset) {
    unsigned char head[8];
    if (fseek(fp, offset, SEEK_SET) != 0 ||
        fread(head, 1, sizeof head, fp) != sizeof head)
      break; /* past the end */
    found = memcmp(head, signature, sizeof head) == 0;
  }
  fclose(fp);
  return found;
}

tfmm_format tfmm_snapshot_probe(const char *path) {
  if (path == NULL || not_a_regular_file(path))
    return TFMM_FORMAT_UNKNOWN;
  if (tfmm_snapshot_is_hdf5(path))
    return TFMM_FORMAT_HDF5;
  unsigned char head[264]; /* GADGET's header record, with its markers */
  char *first = tfmm_gadget2_first_part(path); /* BASE of BASE.0, ... */
  FILE *fp = fopen(first != NULL ? first : path, "rb");
  const size_t len = fp != NULL ? fread(head, 1, sizeof head, fp) : 0;
  if (fp != NULL)
    fclose(fp);
  /* A Tipsy file's first 4 bytes, part of a double, could read 256: a
   * GADGET-2 header record framed by both markers decides first. */
  const int gadget = tfmm_gadget2_probe(head, len);
  if (first != NULL) { /* path names nothing: only BASE of BASE.0 reads */
    free(first);
    return gadget > 0 ? TFMM_FORMAT_GADGET2 : TFMM_FORMAT_UNKNOWN;
  }
  return gadget == 2                   ? TFMM_FORMAT_GADGET2
         : tfmm_tipsy_probe(head, len) ? TFMM_FORMAT_TIPSY
         : gadget == 1                 ? TFMM_FORMAT_GADGET2
                                       : TFMM_FORMAT_UNKNOWN;
}

/* Refuses a path that names anything but a regular file (a pipe, a
 * device, a directory), saying why, before a byte is read. */
static int is_readable_kind(tfmm_io_report *r, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
    return 1; /* a regular file, or a name the reader explains */
  if (S_ISDIR(st.st_mode))
    tfmm_io_fail(r, "%s: cannot read: %s", path, strerror(EISDIR));
  else
    tfmm_io_fail(r,
                 "%s: not a regular file (a pipe or a device): a "
                 "snapshot is read by seeking in it, which a pipe does "
                 "not allow; save it to a file and name that file",
                 path);
  return 0;
}

tfmm_status tfmm_snapshot_read(const char *path,
                               const tfmm_read_options *options,
                               tfmm_snapshot *out, char *message, size_t size) {
  tfmm_io_report r = {.status = TFMM_OK};
  if (out == NULL || path == NULL) {
    tfmm_io_fail_status(&r, TFMM_ERR_INVALID_ARGUMENT,
                        "tfmm_snapshot_read: path and out are required");
    return tfmm_io_report_finish(&r, message, size);
  }
  memset(out, 0, sizeof *out);
  if (!is_readable_kind(&r, path))
    return tfmm_io_report_finish(&r, message, size);
  const tfmm_read_options defaults = {0};
  const tfmm_read_options *o = options != NULL ? options : &defaults;
  out->format =
      o->format != TFMM_FORMAT_UNKNOWN ? o->format : tfmm_snapshot_probe(path);
  switch (out->format) {
  case TFMM_FORMAT_HDF5:
    tfmm_hdf5_read(&r, path, o, out);
    break;
  case TFMM_FORMAT_GADGET2:
    tfmm_gadget2_read(&r, path, o, out);
    break;
  case TFMM_FORMAT_TIPSY:
    tfmm_tipsy_read(&r, path, o, out);
    break;
  default: {
    struct stat st;
    if (stat(path, &st) != 0)
      tfmm_io_fail(&r, "%s: cannot read: %s", path, strerror(errno));
    else
      tfmm_io_fail(&r,
                   "%s: not a snapshot: neither HDF5 nor GADGET-2 nor "
                   "Tipsy (told by its first bytes)",
                   path);
  }
  }
  return tfmm_io_report_finish(&r, message, size);
}

/* What the reader would refuse, the writer refuses too. */
static int check_attrs(tfmm_io_report *r, const char *path, const char *group,
                       const tfmm_attr *attrs, size_t count) {
  for (size_t k = 0; k < count; k++) {
    if (attrs[k].name == NULL || attrs[k].name[0] == '\0' ||
        attrs[k].value == NULL) {
      tfmm_io_fail_status(r, TFMM_ERR_INVALID_ARGUMENT,
                          "%s: /%s entry %zu has no name or no value", path,
                          group, k);
      return 0;
    }
    for (size_t j = 0; j < k; j++)
      if (strcmp(attrs[j].name, attrs[k].name) == 0) {
        tfmm_io_fail_status(r, TFMM_ERR_INVALID_ARGUMENT,
                            "%s: /%s holds '%s' twice", path, group,
                            attrs[k].name);
        return 0;
      }
  }
  return 1;
}

/* Checks s for writing; its largest |coordinate| into *extent (NULL: not
 * wanted), the writer's box, found by the same pass over the bodies. */
static int check_for_writing(tfmm_io_report *r, const char *path,
                             const tfmm_snapshot *s, double *extent) {
  const tfmm_status bad = TFMM_ERR_INVALID_ARGUMENT;
  if (s == NULL) {
    tfmm_io_fail_status(r, bad, "%s: cannot write: no snapshot", path);
    return 0;
  }
  if (s->n == 0 || s->n > UINT32_MAX) {
    /* NumPart_ThisFile is uint32 in the GADGET layout. */
    tfmm_io_fail_status(r, bad,
                        "%s: cannot write %zu bodies: a snapshot holds 1 to "
                        "%lu",
                        path, s->n, (unsigned long)UINT32_MAX);
    return 0;
  }
  if (s->pos == NULL || s->vel == NULL || s->mass == NULL || s->ids == NULL) {
    tfmm_io_fail_status(r, bad,
                        "%s: cannot write: coordinates, velocities, masses "
                        "and IDs are required",
                        path);
    return 0;
  }
  return tfmm_io_check_bodies(r, path, s, bad, extent) &&
         check_attrs(r, path, "Parameters", s->params, s->nparams) &&
         check_attrs(r, path, "RunState", s->state, s->nstate);
}

tfmm_status tfmm_snapshot_check(const char *path, const tfmm_snapshot *s,
                                char *message, size_t size) {
  tfmm_io_report r = {.status = TFMM_OK};
  check_for_writing(&r, path != NULL ? path : "snapshot", s, NULL);
  return tfmm_io_report_finish(&r, message, size);
}

tfmm_status tfmm_snapshot_write_file(const char *path, const char *file,
                                     const tfmm_snapshot *s,
                                     const tfmm_snapshot_output *output,
                                     char *message, size_t size) {
  tfmm_io_report r = {.status = TFMM_OK};
  double extent = 0;
  if (path == NULL || file == NULL)
    tfmm_io_fail_status(&r, TFMM_ERR_INVALID_ARGUMENT,
                        "tfmm_snapshot_write_file: path and file are "
                        "required");
  else if (check_for_writing(&r, path, s, &extent))
    tfmm_hdf5_write(&r, path, file, s, output, extent);
  return tfmm_io_report_finish(&r, message, size);
}

/* Syncs the file or directory path to the disk. */
static int sync_path(const char *path, int flags) {
  const int fd = open(path, flags);
  if (fd < 0)
    return 0;
  const int ok = fsync(fd) == 0;
  return close(fd) == 0 && ok;
}

/* The directory of path ("." when it names none), to free. */
static char *directory_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    return strdup(".");
  const size_t len = slash == path ? 1 : (size_t)(slash - path);
  char *dir = malloc(len + 1);
  if (dir != NULL) {
    memcpy(dir, path, len);
    dir[len] = '\0';
  }
  return dir;
}

/* The process's umask, read without changing it (umask(2) would, for
 * every thread a moment): Linux's /proc/self/status, else the usual 022. */
static mode_t current_umask(void) {
  mode_t mask = 022;
  FILE *fp = fopen("/proc/self/status", "r");
  char line[256];
  while (fp != NULL && fgets(line, sizeof line, fp) != NULL) {
    unsigned value;
    if (sscanf(line, "Umask: %o", &value) == 1) {
      mask = (mode_t)value;
      break;
    }
  }
  if (fp != NULL)
    fclose(fp);
  return mask;
}

/* Writes s to a temporary beside path, syncs it and renames it over
 * path, then syncs the directory; the temporary is removed on failure.
 * mkstemp makes it 0600: it gets 0666 less the umask, as fopen's files. */
static void write_atomic(tfmm_io_report *r, const char *path,
                         const tfmm_snapshot *s,
                         const tfmm_snapshot_output *output, double extent) {
  char *dir = directory_of(path);
  const char *slash = strrchr(path, '/');
  const char *base = slash != NULL ? slash + 1 : path;
  const size_t size = (dir != NULL ? strlen(dir) : 0) + strlen(base) + 32;
  char *tmp = dir != NULL ? malloc(size) : NULL;
  if (tmp == NULL) {
    tfmm_io_fail_status(r, TFMM_ERR_NO_MEMORY, "%s: out of memory", path);
    free(dir);
    return;
  }
  snprintf(tmp, size, "%s/.%s.tmp-XXXXXX", dir, base);
  const int fd = mkstemp(tmp);
  if (fd < 0) {
    tfmm_io_fail(r, "%s: cannot create a temporary file in %s: %s", path, dir,
                 strerror(errno));
  } else {
    fchmod(fd, 0666 & ~current_umask());
    close(fd);
    int ok = tfmm_hdf5_write(r, path, tmp, s, output, extent);
    if (ok && !sync_path(tmp, O_RDONLY)) {
      tfmm_io_fail(r, "%s: cannot sync %s: %s", path, tmp, strerror(errno));
      ok = 0;
    }
    if (ok && rename(tmp, path) != 0) {
      tfmm_io_fail(r, "%s: cannot rename %s over it: %s", path, tmp,
                   strerror(errno));
      ok = 0;
    }
    if (!ok)
      unlink(tmp);
    else
      sync_path(dir, O_RDONLY | O_DIRECTORY); /* the rename, on the disk */
  }
  free(tmp);
  free(dir);
}

tfmm_status tfmm_snapshot_write(const char *path, const tfmm_snapshot *s,
                                const tfmm_snapshot_output *output,
                                char *message, size_t size) {
  tfmm_io_report r = {.status = TFMM_OK};
  double extent = 0;
  if (path == NULL)
    tfmm_io_fail_status(&r, TFMM_ERR_INVALID_ARGUMENT,
                        "tfmm_snapshot_write: no path");
  else if (!tfmm_has_hdf5())
    tfmm_io_fail_status(&r, TFMM_ERR_UNSUPPORTED,
                        "%s: this library was built without HDF5: snapshots "
                        "cannot be written (rebuild with libhdf5-dev)",
                        path);
  else if (check_for_writing(&r, path, s, &extent))
    write_atomic(&r, path, s, output, extent);
  return tfmm_io_report_finish(&r, message, size);
}

static void free_attrs(tfmm_attr *attrs, size_t count) {
  for (size_t k = 0; k < count; k++) {
    free(attrs[k].name);
    free(attrs[k].value);
  }
  free(attrs);
}

void tfmm_snapshot_free(tfmm_snapshot *s) {
  if (s == NULL)
    return;
  free(s->pos);
  free(s->vel);
  free(s->mass);
  free(s->acc);
  free(s->pot);
  free(s->ids);
  free(s->bins);
  free_attrs(s->params, s->nparams);
  free_attrs(s->state, s->nstate);
  free(s->note);
  for (size_t k = 0; k < s->nfiles; k++)
    free(s->files[k]);
  free(s->files);
  memset(s, 0, sizeof *s);
}
