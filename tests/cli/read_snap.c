/* The scratch directory's snapshots read back (read_snap.h). */
#include "read_snap.h"

#include "harness.h"

#include <criterion/criterion.h>

snapshot read_snap(const char *name) {
  snapshot s;
  cr_assert(snapshot_read(sp(name), &s), "cannot read %s", name);
  return s;
}
