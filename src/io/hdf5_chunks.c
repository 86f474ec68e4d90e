/* Chunks written with their checksums summed on several threads
 * (hdf5_chunks.h; the threads: io_threads.h).
 *
 * The chunks go through a ring of buffers: worker threads fill them (copy,
 * shift, pad, checksum) while the calling thread, the only one that calls
 * HDF5 (a serial build is not thread-safe), writes the oldest filled one.
 * The kernel's copy into the page cache, about half of a write, then
 * overlaps the filling instead of following it batch by batch. */
#define _POSIX_C_SOURCE 200809L
#include "io/hdf5_chunks.h"
#include "io/io_threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* HDF5's running sums over a chunk, fed piece by piece. */
typedef struct fletcher {
  uint32_t sum1, sum2;
} fletcher;

/* Adds n bytes to f. A block of m <= 360 words w_0 .. w_{m-1} in HDF5's
 * loop
 *   for each word: sum1 += w; sum2 += sum1
 * adds S = sum w_j to sum1 and m sum1 + T to sum2, T = sum (m - j) w_j =
 * m S - sum j w_j, all modulo 2^32 as the loop's own additions. The sums
 * over the words have no chain from one to the next (the loop's sum2
 * waited on sum1 at every word), so the compiler vectorises them: twice
 * HDF5's rate on one core (6.8 against 3.4 GB/s on the development
 * machine), the same bits (tests/test_hdf5_chunks.c). HDF5 folds the sums
 * to 16 bits after every 360 words from the chunk's start, and a fold's
 * place can change the result (0 against 0xffff): every piece but a
 * chunk's last must be a whole number of blocks (720 bytes), and only the
 * last may end in an odd byte.
 *
 * x86-64's baseline, SSE2, has neither a 32-bit multiply nor a byte
 * shuffle, so the loop is also built for AVX2 and chosen at load time
 * where the processor has it (GCC's and Clang's function
 * multiversioning): 25 against 7.8 GB/s on one core of the development
 * machine, a quarter of a write's processor time before. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define TFMM_FLETCHER_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef TFMM_FLETCHER_CLONES
#define TFMM_FLETCHER_CLONES
#endif
TFMM_FLETCHER_CLONES
static void fletcher_add(fletcher *f, const unsigned char *data, size_t n) {
  uint32_t sum1 = f->sum1, sum2 = f->sum2;
  size_t words = n / 2;
  while (words > 0) {
    const uint32_t m = words > 360 ? 360 : (uint32_t)words;
    uint32_t s = 0, weighted = 0;
    for (uint32_t j = 0; j < m; j++) {
      uint16_t big_endian;
      memcpy(&big_endian, data + 2 * (size_t)j, sizeof big_endian);
      const uint32_t w =
          (uint32_t)(uint16_t)(big_endian << 8 | big_endian >> 8);
      s += w;
      weighted += j * w;
    }
    sum2 += m * sum1 + (m * s - weighted);
    sum1 += s;
    data += 2 * (size_t)m;
    words -= m;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (n % 2 != 0) {
    sum1 += (uint32_t)data[0] << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  f->sum1 = sum1;
  f->sum2 = sum2;
}

/* The checksum of what f was fed: HDF5's last folds. */
static uint32_t fletcher_end(const fletcher *f) {
  const uint32_t sum1 = (f->sum1 & 0xffff) + (f->sum1 >> 16),
                 sum2 = (f->sum2 & 0xffff) + (f->sum2 >> 16);
  return sum2 << 16 | sum1;
}

uint32_t tfmm_hdf5_fletcher32(const unsigned char *data, size_t n) {
  fletcher f = {0, 0};
  fletcher_add(&f, data, n);
  return fletcher_end(&f);
}

/* A chunk is filled and summed a piece at a time, so that the checksum
 * reads what the copy just wrote from the first-level cache rather than
 * from memory (a 1 MiB chunk outgrows the second level of many cores): 40
 * of the checksum's 720-byte blocks, 28 KiB. */
enum { PIECE = 720 * 40 };

/* The ring's buffers per thread: enough that a thread finding the next
 * chunk's slot still being written has another to fill. */
enum { SLOTS_PER_THREAD = 2 };

/* One dataset's chunks on their way: what they are made from, the ring,
 * and where the filling and the writing stand (under lock). */
typedef struct pipeline {
  hid_t set;
  const unsigned char *data;
  const double *shift;
  size_t rows, row_bytes, chunk_rows, chunk_bytes, chunks;
  unsigned char *ring; /* slots buffers of stride bytes */
  size_t slots, stride;
  size_t *filled; /* slot's chunk + 1 once filled, else older */
  size_t claimed; /* chunks handed out to fill, 0 .. claimed - 1 */
  size_t written; /* chunks written, 0 .. written - 1 */
  int stop;       /* every chunk written, or a write failed */
  int ok;         /* the writes' result */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a chunk filled, or a slot freed */
} pipeline;

/* len bytes of the data at from into to: as they are, or (shift not NULL)
 * each double plus *shift (an IEEE addition, as a loop over a copy). */
static void copy_piece(const pipeline *p, unsigned char *to,
                       const unsigned char *from, size_t len) {
  if (p->shift == NULL) {
    memcpy(to, from, len);
    return;
  }
  const double shift = *p->shift;
  for (size_t k = 0; k < len; k += sizeof(double)) {
    double x;
    memcpy(&x, from + k, sizeof x);
    x += shift;
    memcpy(to + k, &x, sizeof x);
  }
}

/* Chunk c of the data into b: its rows, zeros to a whole chunk, and its
 * checksum, little-endian, as HDF5 stores it; a piece at a time, each
 * summed while it is in cache. */
static void fill(const pipeline *p, size_t c, unsigned char *b) {
  const size_t row = c * p->chunk_rows;
  const size_t rows =
      p->rows - row < p->chunk_rows ? p->rows - row : p->chunk_rows;
  const size_t have = rows * p->row_bytes;
  const unsigned char *from = p->data + row * p->row_bytes;
  fletcher f = {0, 0};
  for (size_t at = 0; at < p->chunk_bytes; at += PIECE) {
    const size_t len =
        p->chunk_bytes - at < PIECE ? p->chunk_bytes - at : PIECE;
    const size_t used = at >= have ? 0 : have - at < len ? have - at : len;
    copy_piece(p, b + at, from + at, used);
    memset(b + at + used, 0, len - used);
    fletcher_add(&f, b + at, len);
  }
  const uint32_t sum = fletcher_end(&f);
  for (int k = 0; k < 4; k++)
    b[p->chunk_bytes + (size_t)k] = (unsigned char)(sum >> (8 * k));
}

/* Whether the next chunk to fill may be handed out (locked): there is
 * one, and its slot's chunk (slots before it) has been written. */
static int can_claim(const pipeline *p) {
  return !p->stop && p->claimed < p->chunks &&
         p->claimed < p->written + p->slots;
}

/* Fills the chunk handed out next (called locked; unlocks while
 * filling). */
static void fill_next(pipeline *p) {
  const size_t c = p->claimed++;
  pthread_mutex_unlock(&p->lock);
  fill(p, c, p->ring + (c % p->slots) * p->stride);
  pthread_mutex_lock(&p->lock);
  p->filled[c % p->slots] = c + 1;
  pthread_cond_broadcast(&p->changed);
}

/* Fills chunks until none is left (a worker's part). */
static void fill_chunks(pipeline *p) {
  pthread_mutex_lock(&p->lock);
  while (!p->stop && p->claimed < p->chunks) {
    if (can_claim(p))
      fill_next(p);
    else
      pthread_cond_wait(&p->changed, &p->lock);
  }
  pthread_mutex_unlock(&p->lock);
}

/* The chunks written in order by the calling thread, which fills the next
 * one itself whenever the one it waits for is not ready and one may be
 * handed out (so it also does all the work when no thread was made). */
static int write_in_order(pipeline *p) {
  int ok = 1;
  for (size_t c = 0; ok && c < p->chunks; c++) {
    pthread_mutex_lock(&p->lock);
    while (p->filled[c % p->slots] != c + 1) {
      if (can_claim(p))
        fill_next(p);
      else
        pthread_cond_wait(&p->changed, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    const hsize_t offset[2] = {c * p->chunk_rows, 0};
    ok = H5Dwrite_chunk(p->set, H5P_DEFAULT, 0, offset, p->chunk_bytes + 4,
                        p->ring + (c % p->slots) * p->stride) >= 0;
    pthread_mutex_lock(&p->lock);
    p->written++;
    p->stop = !ok || p->written == p->chunks; /* the workers end */
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
  }
  return ok;
}

/* Part 0 (the caller) writes, the others fill. */
static void run(void *arg, size_t part, size_t parts) {
  (void)parts;
  pipeline *p = arg;
  if (part == 0)
    p->ok = write_in_order(p);
  else
    fill_chunks(p);
}

int tfmm_hdf5_write_chunks(hid_t set, size_t rows, size_t row_bytes,
                           size_t chunk_rows, const void *data,
                           const double *shift) {
  pipeline p = {.set = set,
                .data = data,
                .shift = shift,
                .rows = rows,
                .row_bytes = row_bytes,
                .chunk_rows = chunk_rows,
                .chunk_bytes = chunk_rows * row_bytes,
                .chunks = (rows + chunk_rows - 1) / chunk_rows};
  const size_t threads = tfmm_io_threads_for(p.chunks);
  p.slots = SLOTS_PER_THREAD * threads < p.chunks ? SLOTS_PER_THREAD * threads
                                                  : p.chunks;
  /* Each buffer on cache lines of its own: the threads filling
   * neighbours do not share one, and the shift's doubles are aligned. */
  p.stride = (p.chunk_bytes + 4 + 63) / 64 * 64;
  p.ring = aligned_alloc(64, p.slots * p.stride);
  p.filled = calloc(p.slots, sizeof *p.filled);
  int ok = p.ring != NULL && p.filled != NULL;
  if (ok && pthread_mutex_init(&p.lock, NULL) != 0)
    ok = 0;
  else if (ok && pthread_cond_init(&p.changed, NULL) != 0) {
    pthread_mutex_destroy(&p.lock);
    ok = 0;
  }
  if (ok) {
    tfmm_io_threads_run(run, &p, threads);
    ok = p.ok;
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.lock);
  }
  free(p.filled);
  free(p.ring);
  return ok;
}
