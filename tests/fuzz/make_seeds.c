/* Writes the fuzz harness's seed files that tilefmm does not write
 * itself (seeds.h): OUTDIR/gadget4.hdf5, tipsy.bin, gadget2.bin,
 * gadget2parts.0 and .1, bodies.txt, params.yml and, given a tilefmm
 * checkpoint, OUTDIR/vlstrings.hdf5.
 * Usage: make_seeds OUTDIR [CHECKPOINT]. */
#include "seeds.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: make_seeds OUTDIR [CHECKPOINT]\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/gadget4.hdf5", argv[1]);
  if (fuzz_seed_gadget4(path) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/tipsy.bin", argv[1]);
  if (fuzz_seed_tipsy(path) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/gadget2.bin", argv[1]);
  if (fuzz_seed_gadget2(path) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/gadget2parts", argv[1]);
  if (fuzz_seed_gadget2_parts(path) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/bodies.txt", argv[1]);
  if (fuzz_seed_text(path) != 0)
    return 1;
  snprintf(path, sizeof path, "%s/params.yml", argv[1]);
  if (fuzz_seed_params(path) != 0)
    return 1;
  if (argc > 2) {
    snprintf(path, sizeof path, "%s/vlstrings.hdf5", argv[1]);
    if (fuzz_seed_vlstrings(path, argv[2]) != 0)
      return 1;
  }
  return 0;
}
