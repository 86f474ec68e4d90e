/* Choosing the particle types of a snapshot (see particle_types.h). */
#include "particle_types.h"

#include "cli.h"
#include "snapshot.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* The name GADGET-4 and SWIFT give type k, after a space. */
static const char *type_name(int k) {
  switch (k) {
  case 0:
    return " (gas)";
  case 1:
    return " (dark matter)";
  case 4:
    return " (stars)";
  case 5:
    return " (black holes)";
  default:
    return "";
  }
}

/* "type 0 (gas): 10, type 1 (dark matter): 20" (label "type ") for the
 * types of mask that hold particles. */
static void describe(const char *label, int ntypes, const uint64_t *count,
                     uint64_t mask, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < ntypes && used < size; k++)
    if ((mask >> k & 1) && count[k] > 0) {
      const int w =
          snprintf(buf + used, size - used, "%s%s%d%s: %" PRIu64,
                   used > 0 ? ", " : "", label, k, type_name(k), count[k]);
      used += w > 0 ? (size_t)w : 0;
    }
}

static int bits(uint64_t mask) {
  int c = 0;
  for (; mask != 0; mask &= mask - 1)
    c++;
  return c;
}

int particle_types_select(const char *path, const char *label, int ntypes,
                          uint64_t *count, uint64_t types, const char *flag) {
  uint64_t present = 0;
  for (int k = 0; k < ntypes; k++)
    if (count[k] > 0)
      present |= (uint64_t)1 << k;
  if (present == 0) {
    cli_error("%s: holds no particles (the header's counts are all zero)",
              path);
    return 0;
  }
  char held[512];
  describe(label, ntypes, count, present, held, sizeof held);
  uint64_t chosen = types;
  if (chosen == SNAPSHOT_TYPES_DEFAULT && bits(present) == 1 && !(present & 1))
    chosen = present;
  if (chosen == SNAPSHOT_TYPES_DEFAULT) {
    if (flag != NULL)
      cli_error("%s: holds %s; tilefmm computes gravity alone and does not "
                "merge particle types (or take gas for collisionless bodies) "
                "unasked: choose the types to read with %s, a list such as "
                "%s 1,4 or %s all",
                path, held, flag, flag, flag);
    else
      cli_error("%s: holds %s; this command reads one particle type, not "
                "gas: keep the types wanted in a file of their own",
                path, held);
    return 0;
  }
  const uint64_t missing = chosen == SNAPSHOT_TYPES_ALL ? 0 : chosen & ~present;
  for (int k = 0; k < PARTICLE_TYPES_MAX; k++)
    if (missing >> k & 1) {
      cli_error("%s: %s names %s%d, which the file does not hold (it "
                "holds %s)",
                path, flag != NULL ? flag : "the choice of types", label, k,
                held);
      return 0;
    }
  for (int k = 0; k < ntypes; k++)
    if (!(chosen >> k & 1))
      count[k] = 0;
  if (types != SNAPSHOT_TYPES_DEFAULT && flag != NULL) {
    char read[512];
    describe(label, ntypes, count, chosen, read, sizeof read);
    fprintf(stderr, "tilefmm: %s: read %s as gravitating bodies%s\n", path,
            read, bits(chosen & present) > 1 ? ", in type order" : "");
  }
  return 1;
}

const char *particle_types_fault(const double *x, const double *v, double m) {
  if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]))
    return "a non-finite coordinate";
  if (v != NULL && (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2])))
    return "a non-finite velocity";
  if (!isfinite(m))
    return "a non-finite mass";
  if (!(m > 0))
    return "a mass <= 0";
  return NULL;
}
