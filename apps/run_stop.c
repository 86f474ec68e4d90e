/* The stop signals of tilefmm run (run_stop.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_stop.h"

#include <signal.h>
#include <string.h>

/* The signal's number, or 0. A flag is all a handler may set, hence this
 * one variable at file scope. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) {
  stop_signal = sig;
  signal(sig, SIG_DFL);
}

void run_stop_catch(void) {
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (int k = 0; k < 3; k++) {
    struct sigaction old, sa;
    sigaction(sigs[k], NULL, &old);
    if (old.sa_handler == SIG_IGN)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[k], &sa, NULL);
  }
}

int run_stop_signal(void) { return stop_signal; }
