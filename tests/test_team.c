/* tfmm_team_slice (src/team.h): the slices that split a staged copy
 * (kernels/context/host_copy.c) among a team cover every byte, in whole
 * cache lines, and no slice is longer than its share plus a line. The
 * truth is a byte map marked slice by slice. 2,720,008 bytes among 10
 * threads is the case that left the last 8 bytes of a copy unwritten:
 * the potentials of 340,001 bodies staged from the GPU, whose last one
 * stayed as it was. */
#include "team.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static void check_covers(size_t bytes, int team) {
  const size_t s = tfmm_team_slice(bytes, team);
  cr_assert_eq(s % 64, 0, "%zu bytes, %d threads: slice %zu", bytes, team, s);
  cr_assert(s < (bytes + (size_t)team - 1) / (size_t)team + 64,
            "%zu bytes, %d threads: slice %zu is longer than needed", bytes,
            team, s);
  unsigned char *seen = calloc(bytes, 1);
  cr_assert_not_null(seen);
  for (int t = 0; t < team; t++) {
    const size_t begin = (size_t)t * s;
    if (begin >= bytes)
      continue;
    const size_t len = bytes - begin < s ? bytes - begin : s;
    memset(seen + begin, 1, len);
  }
  for (size_t i = 0; i < bytes; i++)
    cr_assert_eq(seen[i], 1, "%zu bytes, %d threads: byte %zu not copied",
                 bytes, team, i);
  free(seen);
}

Test(team, slices_cover_every_byte) {
  for (size_t bytes = 1; bytes <= 3000; bytes += 7)
    for (int team = 1; team <= 17; team++)
      check_covers(bytes, team);
  check_covers(2720008, 10);
  check_covers((size_t)4 << 20, 16);
  check_covers(((size_t)4 << 20) + 8, 16);
  check_covers(640 * 16 + 8, 16);
}
