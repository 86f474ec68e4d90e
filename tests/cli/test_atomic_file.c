/* atomic_file with several temporaries at once (apps/atomic_file.h), as a
 * run's writer leaves a snapshot to be synced while it writes the next:
 * a signal that ends the program removes every temporary still open, and
 * the signals stay watched until the last one is committed or discarded,
 * from whichever thread. Each signal is raised in a forked child, whose
 * death by it the test checks; the temporaries are the scratch
 * directory's (assert_no_temporaries). */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"
#include "harness.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(atomic_file, .init = scratch_make, .fini = scratch_remove);

static void open_and_write(atomic_file *af, const char *name) {
  cr_assert(atomic_file_open(af, sp(name)), "%s: not opened", name);
  cr_assert(fputs("written\n", af->fp) >= 0);
  cr_assert_eq(fflush(af->fp), 0);
}

/* Forks a child that runs body and then raises SIGTERM; asserts that
 * SIGTERM ended it. */
static void die_by_sigterm(void (*body)(void)) {
  fflush(NULL);
  const pid_t pid = fork();
  cr_assert(pid >= 0, "fork failed");
  if (pid == 0) {
    body();
    raise(SIGTERM);
    _exit(3); /* not reached when the signal ends the child */
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
            "the child was not ended by SIGTERM (status %d)", status);
}

static void two_open(void) {
  atomic_file a, b;
  open_and_write(&a, "a.txt");
  open_and_write(&b, "b.txt");
}

Test(atomic_file, a_signal_removes_every_open_temporary) {
  die_by_sigterm(two_open);
  assert_no_temporaries();
  cr_assert(!exists("a.txt") && !exists("b.txt"),
            "a file killed before its commit took its name");
}

static void *commit_it(void *arg) {
  return (void *)(intptr_t)atomic_file_commit(arg);
}

/* a committed on another thread, b still open: the signal removes b's
 * temporary, a stays whole. */
static void one_committed_one_open(void) {
  atomic_file a, b;
  open_and_write(&a, "a.txt");
  open_and_write(&b, "b.txt");
  pthread_t t;
  void *ok = NULL;
  if (pthread_create(&t, NULL, commit_it, &a) != 0 ||
      pthread_join(t, &ok) != 0 || ok == NULL)
    _exit(4);
}

Test(atomic_file, the_signals_stay_watched_until_the_last) {
  die_by_sigterm(one_committed_one_open);
  assert_no_temporaries();
  char *a = read_text("a.txt");
  cr_assert(a != NULL && strcmp(a, "written\n") == 0,
            "the file committed before the signal is not whole");
  free(a);
  cr_assert(!exists("b.txt"));
}

/* After the last commit the dispositions are the ones from before. */
Test(atomic_file, the_dispositions_come_back_after_the_last) {
  struct sigaction before, after;
  cr_assert_eq(sigaction(SIGTERM, NULL, &before), 0);
  atomic_file a, b;
  open_and_write(&a, "a.txt");
  open_and_write(&b, "b.txt");
  cr_assert(atomic_file_commit(&b));
  struct sigaction between;
  cr_assert_eq(sigaction(SIGTERM, NULL, &between), 0);
  cr_assert(between.sa_handler != before.sa_handler,
            "SIGTERM no longer watched with a.txt still open");
  cr_assert(atomic_file_commit(&a));
  cr_assert_eq(sigaction(SIGTERM, NULL, &after), 0);
  cr_assert(after.sa_handler == before.sa_handler,
            "SIGTERM's disposition not given back");
  cr_assert(exists("a.txt") && exists("b.txt"));
  assert_no_temporaries();
}
