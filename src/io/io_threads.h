/* Work of the snapshot writer spread over POSIX threads made for one call
 * and joined before it returns (src/io/io_threads.c). Not OpenMP's: a
 * snapshot may be written by a process forked from one whose OpenMP
 * threads then no longer exist (the CLI's writes under a file-size limit,
 * a Python worker), where libgomp's pool would wait for them for ever.
 * Internal to the library. */
#ifndef TFMM_IO_THREADS_H
#define TFMM_IO_THREADS_H

#include <stddef.h>

/* The most threads one call runs on, the caller's among them: past a few,
 * a pass over the bodies is limited by the memory and a write by the page
 * cache's copy, which does not scale with threads. */
#define TFMM_IO_THREADS_MAX 8

/* The threads for work of `items` independent items: the processors
 * online, at most TFMM_IO_THREADS_MAX and one an item (at least 1). */
size_t tfmm_io_threads_for(size_t items);

/* Runs task(arg, part, parts) for every part 0 .. parts - 1 (parts at most
 * TFMM_IO_THREADS_MAX), part 0 on the calling thread and the others on
 * threads made for them; a part whose thread cannot be made runs on the
 * calling thread after part 0, so every part runs whatever the system
 * allows. A part may wait for part 0, never part 0 for another. */
void tfmm_io_threads_run(void (*task)(void *arg, size_t part, size_t parts),
                         void *arg, size_t parts);

#endif
