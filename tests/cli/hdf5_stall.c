/* Stand-ins for libhdf5's H5Dwrite and H5Dwrite_chunk, preloaded into the
 * tool by test_run_stop.c: a write into a file whose name holds
 * $TFMM_HDF5_STALL creates the file $TFMM_HDF5_STALL_MARK and then waits
 * for ever, so that the test can kill the run in the middle of that
 * file's write; every other write is libhdf5's own. A write into a file
 * whose name holds $TFMM_HDF5_SLOW sleeps 0.1 s first (a slow disk). And
 * for fsync: the sync of a file whose name holds $TFMM_FSYNC_STALL waits
 * for ever (a disk that never finishes), and the sync of a file whose
 * name (its last component) holds $TFMM_FSYNC_FAIL fails with EIO, as a
 * disk's write-back error reaches fsync (test_run_writer.c); every other
 * is the C library's. And rename: with $TFMM_RENAME_LOG set, each
 * rename's new name (its last component) is appended to that file, a
 * line each, in the order the files take their names. */
#define _GNU_SOURCE
#include <hdf5.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stall_if_named(hid_t object) {
  const char *slow = getenv("TFMM_HDF5_SLOW");
  char name[4096];
  if (slow != NULL && slow[0] != '\0' &&
      H5Fget_name(object, name, sizeof name) >= 0 && strstr(name, slow) != NULL)
    usleep(100000);
  const char *want = getenv("TFMM_HDF5_STALL");
  if (want == NULL || want[0] == '\0' ||
      H5Fget_name(object, name, sizeof name) < 0 || strstr(name, want) == NULL)
    return;
  const char *mark = getenv("TFMM_HDF5_STALL_MARK");
  FILE *fp = mark != NULL ? fopen(mark, "w") : NULL;
  if (fp != NULL)
    fclose(fp);
  for (;;)
    pause();
}

herr_t H5Dwrite(hid_t set, hid_t memory_type, hid_t memory_space,
                hid_t file_space, hid_t transfer, const void *buf) {
  stall_if_named(set);
  herr_t (*real)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);
  *(void **)&real = dlsym(RTLD_NEXT, "H5Dwrite");
  return real(set, memory_type, memory_space, file_space, transfer, buf);
}

herr_t H5Dwrite_chunk(hid_t set, hid_t transfer, uint32_t filters,
                      const hsize_t *offset, size_t size, const void *buf) {
  stall_if_named(set);
  herr_t (*real)(hid_t, hid_t, uint32_t, const hsize_t *, size_t, const void *);
  *(void **)&real = dlsym(RTLD_NEXT, "H5Dwrite_chunk");
  return real(set, transfer, filters, offset, size, buf);
}

/* The last component of the file open as fd into name, or 0. */
static int fd_base_name(int fd, char *name, size_t size) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t len = readlink(link, path, sizeof path - 1);
  if (len <= 0)
    return 0;
  path[len] = '\0';
  const char *slash = strrchr(path, '/');
  snprintf(name, size, "%s", slash != NULL ? slash + 1 : path);
  return 1;
}

int fsync(int fd) {
  const char *fail = getenv("TFMM_FSYNC_FAIL");
  char base[PATH_MAX];
  if (fail != NULL && fail[0] != '\0' && fd_base_name(fd, base, sizeof base) &&
      strstr(base, fail) != NULL) {
    errno = EIO;
    return -1;
  }
  const char *want = getenv("TFMM_FSYNC_STALL");
  if (want != NULL && want[0] != '\0') {
    char link[64], name[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t len = readlink(link, name, sizeof name - 1);
    if (len > 0) {
      name[len] = '\0';
      if (strstr(name, want) != NULL)
        for (;;)
          pause();
    }
  }
  int (*real)(int);
  *(void **)&real = dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}

int rename(const char *from, const char *to) {
  int (*real)(const char *, const char *);
  *(void **)&real = dlsym(RTLD_NEXT, "rename");
  const int rc = real(from, to);
  const char *log = getenv("TFMM_RENAME_LOG");
  if (rc == 0 && log != NULL && log[0] != '\0') {
    const char *slash = strrchr(to, '/');
    char line[PATH_MAX + 2];
    const int len =
        snprintf(line, sizeof line, "%s\n", slash != NULL ? slash + 1 : to);
    /* One write of the whole line, appended: lines from two threads do
     * not mix. */
    const int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      const ssize_t wrote = write(out, line, (size_t)len);
      (void)wrote; /* a line short: the test's comparison fails */
      close(out);
    }
  }
  return rc;
}
