/* bench_snapshot_write: the wall time of one HDF5 snapshot write
 * (tfmm_snapshot_write_file), as tilefmm run writes its snapshots and
 * checkpoints on its writer thread: every field (coordinates, velocities,
 * masses, IDs, accelerations, potentials), double precision, no
 * compression; the snapshot's coordinates shifted into its box, the
 * checkpoint's as they are. The run waits for a write slower than its ten
 * steps, so this time is on its critical path.
 *
 *   bench_snapshot_write PATH BODIES REPS [snapshot|checkpoint]
 *
 * Prints one line a write (seconds, and GB/s of the datasets' bytes), then
 * the median. PATH is removed before each write and at the end: put it
 * on /dev/shm for the CPU's share alone, on a disk's file system for the
 * page cache's too (the write is not synced). */
#define _POSIX_C_SOURCE 200809L
#include "tilefmm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A uniform double in [-1, 1) from the index (SplitMix64): the same
 * bodies on every machine, without a generator's state. */
static double uniform(uint64_t k) {
  k += 0x9e3779b97f4a7c15ull;
  k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ull;
  k = (k ^ (k >> 27)) * 0x94d049bb133111ebull;
  k ^= k >> 31;
  return (double)(k >> 11) * 0x1p-52 - 1;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const int checkpoint = argc > 4 && strcmp(argv[4], "checkpoint") == 0;
  if (argc < 4 || argc > 5 ||
      (argc == 5 && !checkpoint && strcmp(argv[4], "snapshot") != 0)) {
    fprintf(stderr, "usage: bench_snapshot_write PATH BODIES REPS "
                    "[snapshot|checkpoint]\n");
    return 2;
  }
  const size_t n = (size_t)strtoull(argv[2], NULL, 10);
  const int reps = atoi(argv[3]);
  if (n == 0 || n > UINT32_MAX || reps < 1) {
    fprintf(stderr, "bench_snapshot_write: BODIES 1..2^32-1, REPS >= 1\n");
    return 2;
  }
  tfmm_snapshot s = {.n = n, .time = 1};
  s.pos = malloc(3 * n * sizeof *s.pos);
  s.vel = malloc(3 * n * sizeof *s.vel);
  s.acc = malloc(3 * n * sizeof *s.acc);
  s.mass = malloc(n * sizeof *s.mass);
  s.pot = malloc(n * sizeof *s.pot);
  s.ids = malloc(n * sizeof *s.ids);
  double *times = malloc((size_t)reps * sizeof *times);
  if (s.pos == NULL || s.vel == NULL || s.acc == NULL || s.mass == NULL ||
      s.pot == NULL || s.ids == NULL || times == NULL) {
    fprintf(stderr, "bench_snapshot_write: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < 3 * n; i++) {
    s.pos[i] = uniform(i);
    s.vel[i] = uniform(i + (1ull << 40));
    s.acc[i] = uniform(i + (2ull << 40));
  }
  for (size_t i = 0; i < n; i++) {
    s.mass[i] = 1.0 / (double)n;
    s.pot[i] = uniform(i + (3ull << 40)) - 1;
    s.ids[i] = i + 1;
  }
  const tfmm_snapshot_output snapshot = {TFMM_SNAPSHOT_ALL, 0, 0};
  const double bytes = (double)n * 12 * sizeof(double);
  char message[512];
  for (int r = 0; r < reps; r++) {
    /* A new file each time, as the run's temporaries (apps/atomic_file.c):
     * truncating the last write's 100 MB on ext4 would be timed too. */
    unlink(argv[1]);
    const double t0 = now();
    const tfmm_status st = tfmm_snapshot_write_file(
        argv[1], argv[1], &s, checkpoint ? NULL : &snapshot, message,
        sizeof message);
    times[r] = now() - t0;
    if (st != TFMM_OK) {
      fprintf(stderr, "bench_snapshot_write: %s\n", message);
      return 1;
    }
    printf("write %d bodies %zu %.4f s %.2f GB/s\n", r, n, times[r],
           bytes / times[r] / 1e9);
  }
  qsort(times, (size_t)reps, sizeof *times, cmp_double);
  const double median = reps % 2 != 0
                            ? times[reps / 2]
                            : (times[reps / 2 - 1] + times[reps / 2]) / 2;
  printf("median %s bodies %zu reps %d %.4f s %.2f GB/s\n",
         checkpoint ? "checkpoint" : "snapshot", n, reps, median,
         bytes / median / 1e9);
  unlink(argv[1]);
  tfmm_snapshot_free(&s);
  free(times);
  return 0;
}
