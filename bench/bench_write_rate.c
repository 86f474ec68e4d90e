/* How fast a file of MB megabytes reaches the page cache when THREADS
 * threads write its disjoint parts with pwrite (blocks of 1 MiB), and how
 * long its fsync then takes: what a snapshot writer can gain from writing
 * its data on several threads.
 *
 *   bench_write_rate DIR MB THREADS [REPS]
 *
 * Prints one line a repetition: threads, MB, write seconds, GB/s, fsync
 * seconds. The file (DIR/bench_write_rate.tmp) is removed at the end. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK = 1 << 20 };

typedef struct part {
  int fd;
  size_t first, count; /* blocks */
  const unsigned char *buf;
  size_t bytes; /* of buf: the whole file */
  int failed;
} part;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *write_part(void *arg) {
  part *p = arg;
  for (size_t b = p->first; b < p->first + p->count; b++) {
    size_t at = b * (size_t)BLOCK, done = 0;
    while (done < BLOCK) {
      ssize_t w =
          pwrite(p->fd, p->buf + at + done, BLOCK - done, (off_t)(at + done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        p->failed = 1;
        return NULL;
      }
      done += (size_t)w;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_write_rate DIR MB THREADS [REPS]\n");
    return 2;
  }
  const size_t mb = (size_t)strtoul(argv[2], NULL, 10);
  const int threads = atoi(argv[3]), reps = argc > 4 ? atoi(argv[4]) : 3;
  if (mb == 0 || threads < 1 || threads > 64 || reps < 1) {
    fprintf(stderr, "bench_write_rate: MB >= 1, THREADS 1..64, REPS >= 1\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/bench_write_rate.tmp", argv[1]);
  const size_t bytes = mb * (size_t)BLOCK;
  unsigned char *buf = malloc(bytes);
  if (buf == NULL) {
    fprintf(stderr, "bench_write_rate: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < bytes; i++)
    buf[i] = (unsigned char)(i * 2654435761u >> 13);
  pthread_t tid[64];
  part parts[64];
  for (int r = 0; r < reps; r++) {
    unlink(path);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
      fprintf(stderr, "bench_write_rate: %s: %s\n", path, strerror(errno));
      return 1;
    }
    double t0 = now();
    for (int k = 0; k < threads; k++) {
      size_t lo = mb * (size_t)k / (size_t)threads,
             hi = mb * (size_t)(k + 1) / (size_t)threads;
      parts[k] = (part){fd, lo, hi - lo, buf, bytes, 0};
      pthread_create(&tid[k], NULL, write_part, &parts[k]);
    }
    int failed = 0;
    for (int k = 0; k < threads; k++) {
      pthread_join(tid[k], NULL);
      failed |= parts[k].failed;
    }
    double t1 = now();
    fsync(fd);
    double t2 = now();
    close(fd);
    if (failed) {
      fprintf(stderr, "bench_write_rate: a write failed\n");
      return 1;
    }
    printf("threads %d MB %zu write %.4f s %.2f GB/s fsync %.4f s\n", threads,
           mb, t1 - t0, (double)bytes / (t1 - t0) / 1e9, t2 - t1);
  }
  unlink(path);
  free(buf);
  return 0;
}
