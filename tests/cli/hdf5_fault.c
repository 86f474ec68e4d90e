/* A stand-in for libhdf5's H5Fopen, preloaded into the tool by the tests
 * of its isolated reader (test_hdf5_damage.c): it crashes (SIGSEGV), or
 * with TFMM_HDF5_FAULT=loop spins for ever, as libhdf5 did on damaged
 * files, so that both ends are tested whatever libhdf5 does. */
#include <hdf5.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl) {
  (void)name;
  (void)flags;
  (void)fapl;
  const char *fault = getenv("TFMM_HDF5_FAULT");
  if (fault != NULL && strcmp(fault, "loop") == 0) {
    volatile unsigned long spins = 0;
    for (;;)
      spins++;
  }
  raise(SIGSEGV);
  return -1;
}
