/* The snapshot writer's threads (io_threads.h). */
#define _POSIX_C_SOURCE 200809L
#include "io/io_threads.h"

#include <pthread.h>
#include <unistd.h>

size_t tfmm_io_threads_for(size_t items) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = cpus > 1 ? (size_t)cpus : 1;
  threads = threads < TFMM_IO_THREADS_MAX ? threads : TFMM_IO_THREADS_MAX;
  threads = threads < items ? threads : items;
  return threads > 0 ? threads : 1;
}

/* One part's task and its place, as a thread's argument. */
typedef struct part {
  void (*task)(void *arg, size_t part, size_t parts);
  void *arg;
  size_t part, parts;
} part;

static void *run_part(void *arg) {
  const part *p = arg;
  p->task(p->arg, p->part, p->parts);
  return NULL;
}

void tfmm_io_threads_run(void (*task)(void *arg, size_t part, size_t parts),
                         void *arg, size_t parts) {
  parts = parts < TFMM_IO_THREADS_MAX ? parts : TFMM_IO_THREADS_MAX;
  pthread_t id[TFMM_IO_THREADS_MAX];
  part p[TFMM_IO_THREADS_MAX];
  size_t made = 1;
  for (size_t k = 0; k < parts; k++)
    p[k] = (part){task, arg, k, parts};
  while (made < parts &&
         pthread_create(&id[made], NULL, run_part, &p[made]) == 0)
    made++;
  task(arg, 0, parts);
  for (size_t k = made; k < parts; k++) /* not made: run here */
    task(arg, k, parts);
  for (size_t k = 1; k < made; k++)
    pthread_join(id[k], NULL);
}
