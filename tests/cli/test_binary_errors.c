/* Damaged and inconsistent Tipsy and GADGET-2 files: each refused with
 * exit status 1 and nothing written, the message naming the file, the
 * part (block, particle) and the byte offset (issue 15). */
#define _POSIX_C_SOURCE 200809L
#include "binary_writer.h"
#include "harness.h"
#include "snapshot_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(binary_errors, .init = scratch_make, .fini = scratch_remove);

/* forces --in NAME --types all must fail, naming needle (and needle2). */
static void refused(const char *name, const char *needle, const char *needle2) {
  const char *args[] = {"forces",   "--in",   sp(name),  "--out", sp("out.txt"),
                        "--method", "direct", "--types", "all",   NULL};
  expect_failure(args, 1, needle, needle2);
  unlink(sp("out.txt"));
}

/* Formats into a static buffer, for expected messages. */
static const char *fmt(const char *f, ...)
    __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *f, ...) {
  static char buf[4][512];
  static int next;
  char *b = buf[next++ % 4];
  va_list ap;
  va_start(ap, f);
  vsnprintf(b, 512, f, ap);
  va_end(ap);
  return b;
}

/* Edits of a file: bytes overwritten at offset, or the file cut. */
static void poke(const char *name, size_t offset, const void *p, size_t len) {
  size_t size;
  unsigned char *b = read_bytes(sp(name), &size);
  cr_assert_leq(offset + len, size);
  memcpy(b + offset, p, len);
  write_bytes(sp(name), b, size);
  free(b);
}

static void cut(const char *name, size_t size) {
  cr_assert_eq(truncate(sp(name), (off_t)size), 0);
}

static void poke_u32_le(const char *name, size_t offset, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                        (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  poke(name, offset, b, 4);
}

static void poke_f32_le(const char *name, size_t offset, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  poke_u32_le(name, offset, bits);
}

static void poke_f64_le(const char *name, size_t offset, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  poke_u32_le(name, offset, (uint32_t)bits);
  poke_u32_le(name, offset + 4, (uint32_t)(bits >> 32));
}

/* 10 dark matter bodies (IDs 1000..1009), their masses in block MASS
 * unless g has a massarr; format 1, little-endian, floats by default. */
static gadget_layout dark_matter(const char *name, gadget_options *g) {
  const size_t count[NTYPES] = {0, 10, 0, 0, 0, 0};
  model m = model_random(count, 7, 1);
  gadget_layout w;
  gadget_write(&m, g, sp(name), &w);
  model_free(&m);
  return w;
}

Test(binary_errors, gadget_truncated) {
  gadget_options g = gadget_defaults();
  const gadget_layout w = dark_matter("g.dat", &g);
  cut("g.dat", w.pos + 10);
  refused("g.dat",
          fmt("g.dat: truncated: block POS's record (marker at byte offset "
              "%zu) says 120 bytes, but the file ends at byte %zu",
              w.pos - 4, w.pos + 10),
          NULL);
  cut("g.dat", 100);
  refused("g.dat",
          "g.dat: truncated: block HEAD's record (marker at byte offset 0) "
          "says 256 bytes, but the file ends at byte 100",
          NULL);
  dark_matter("g.dat", &g);
  cut("g.dat", w.pos + 124); /* POS whole, then nothing */
  refused("g.dat",
          fmt("g.dat: block VEL is missing: the file ends after block POS, "
              "at byte %zu",
              w.pos + 124),
          NULL);
  g.format = 2;
  const gadget_layout w2 = dark_matter("g2.dat", &g);
  cut("g2.dat", w2.id - 6); /* inside the ID block's name record */
  refused("g2.dat", "g2.dat: truncated: the record naming the block after VEL",
          fmt("the file ends at byte %zu", w2.id - 6));
}

Test(binary_errors, gadget_bad_markers_and_sizes) {
  gadget_options g = gadget_defaults();
  const gadget_layout w = dark_matter("g.dat", &g);
  poke_u32_le("g.dat", w.pos + 120, 121);
  refused("g.dat",
          fmt("g.dat: the marker closing block POS's record at byte offset "
              "%zu reads 121, but the one opening it (byte offset %zu) reads "
              "120",
              w.pos + 120, w.pos - 4),
          NULL);
  dark_matter("g.dat", &g);
  poke_u32_le("g.dat", w.head + 4, 11); /* npart[1] = 11 */
  refused("g.dat",
          fmt("g.dat: block POS (byte offset %zu) holds 120 bytes, but the "
              "header's 11 particles need 132 or 264 (float or double)",
              w.pos),
          NULL);
  dark_matter("g.dat", &g);
  poke_u32_le("g.dat", 0, 255); /* a first marker that is no GADGET's */
  cr_assert_eq(RUN("forces", "--in", sp("g.dat"), "--method", "direct"), 1);
  assert_stderr_has("g.dat:1: contains a NUL byte: a binary file");
  dark_matter("g.dat", &g);
  poke_f64_le("g.dat", w.head + 24 + 8, -1); /* massarr[1] */
  refused("g.dat",
          fmt("g.dat: header: massarr[1] (byte offset %zu) is -1", w.head + 32),
          NULL);
  /* npartTotal above npart in a single file: a part of a larger one. */
  g.total[1] = 20;
  dark_matter("g.dat", &g);
  refused("g.dat", "g.dat: npartTotal[1] = 20", "part of a multi-file");
}

Test(binary_errors, gadget_bad_values) {
  gadget_options g = gadget_defaults();
  const gadget_layout w = dark_matter("g.dat", &g);
  poke_f32_le("g.dat", w.pos + 4 * (3 * 2 + 1), NAN);
  refused("g.dat",
          fmt("g.dat: type 1 particle 2 (ParticleID 1002) has a non-finite "
              "coordinate: block POS, byte offset %zu",
              w.pos + 2 * 12), /* where the particle's coordinates start */
          NULL);
  dark_matter("g.dat", &g);
  poke_f32_le("g.dat", w.vel + 4 * (3 * 9), INFINITY);
  refused("g.dat",
          "type 1 particle 9 (ParticleID 1009) has a non-finite velocity",
          fmt("block VEL, byte offset %zu", w.vel + 4 * 27));
  dark_matter("g.dat", &g);
  poke_f32_le("g.dat", w.mass + 4 * 4, 0);
  refused("g.dat",
          fmt("g.dat: type 1 particle 4 (ParticleID 1004) has a mass <= 0: "
              "block MASS, byte offset %zu",
              w.mass + 16),
          NULL);
  dark_matter("g.dat", &g);
  poke_f32_le("g.dat", w.mass, NAN);
  refused("g.dat", "has a non-finite mass: block MASS", NULL);
  g.redshift = 9;
  g.time = 0.1;
  dark_matter("g.dat", &g);
  refused("g.dat", "g.dat: a cosmological snapshot (redshift 9, time 0.1",
          "does not convert them");
}

Test(binary_errors, gadget_parts_that_disagree) {
  gadget_options g = gadget_defaults();
  g.num_files = 2;
  g.total[1] = 20;
  dark_matter("snap.0", &g);
  refused("snap.0", "snap.1: cannot open", NULL);
  dark_matter("single", &g);
  refused("single", "single: part of a snapshot in 2 files (num_files)",
          "its name does not end in .N");
  g.time = 1;
  dark_matter("snap.1", &g);
  refused("snap.0", "snap.1: its header's time differs from that of", NULL);
  g.time = 0;
  /* A part whose redshift is not 0 makes the snapshot cosmological, or
   * not one snapshot; named by its part 0, whose redshift is 0, it was
   * read as isolated bodies (fuzz case 610: one flipped bit in part 1's
   * redshift). */
  g.redshift = 2;
  dark_matter("snap.1", &g);
  refused("snap.0", "snap.1: its header's redshift differs from that of", NULL);
  refused("snap.1", "snap.1: a cosmological snapshot (redshift 2", NULL);
  g.redshift = 0;
  g.total[1] = 21;
  dark_matter("snap.1", &g);
  refused("snap.0", "header's npartTotal differs", NULL);
  g.total[1] = 21;
  dark_matter("snap.0", &g);
  refused("snap.1",
          "the 2 parts hold 20 particles of type 1, but npartTotal[1] (with "
          "npartTotalHighWord) is 21",
          NULL);
}

/* 3 gas, 4 dark, 2 star particles, big-endian with the pad: the dark ones
 * start at 32 + 3 * 48 = 176, 36 bytes each. */
static void tipsy(const char *name) {
  const size_t count[NTYPES] = {3, 4, 0, 0, 2, 0};
  model m = model_random(count, 11, 1);
  tipsy_write(&m, 0.5, 0, 1, sp(name));
  model_free(&m);
}

static void poke_f32_be(const char *name, size_t offset, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  unsigned char b[4] = {(unsigned char)(bits >> 24),
                        (unsigned char)(bits >> 16), (unsigned char)(bits >> 8),
                        (unsigned char)bits};
  poke(name, offset, b, 4);
}

Test(binary_errors, tipsy_damaged) {
  tipsy("t.std");
  const size_t size = 32 + 3 * 48 + 4 * 36 + 2 * 44;
  cut("t.std", 176 + 2 * 36 + 5);
  refused("t.std",
          "t.std: truncated: the header promises 4 dark particles (9 in all), "
          "but dark particle 2 (at byte offset 248) ends past the end of the "
          "file at byte 253",
          NULL);
  tipsy("t.std");
  size_t len;
  unsigned char *b = read_bytes(sp("t.std"), &len);
  cr_assert_eq(len, size);
  b = realloc(b, len + 8);
  memset(b + len, 0, 8);
  write_bytes(sp("more.std"), b, len + 8);
  free(b);
  refused(
      "more.std",
      fmt("more.std: 8 bytes follow the last particle (byte offset %zu)", size),
      "big-endian");
  poke_f32_be("t.std", 176 + 36 + 4 * 2, NAN); /* dark 1's y */
  refused("t.std",
          "t.std: dark particle 1 (byte offset 212) has a non-finite "
          "coordinate",
          NULL);
  tipsy("t.std");
  poke_f32_be("t.std", 176 + 3 * 36, 0); /* dark 3's mass */
  refused("t.std", "t.std: dark particle 3 (byte offset 284) has a mass <= 0",
          NULL);
  tipsy("t.std");
  poke_f32_be("t.std", 32 + 48 + 4 * 5, INFINITY); /* gas 1's vy */
  refused("t.std", "gas particle 1 (byte offset 80) has a non-finite velocity",
          NULL);
  tipsy("t.std");
  const unsigned char nan_time[8] = {0x7f, 0xf8, 0, 0, 0, 0, 0, 0};
  poke("t.std", 0, nan_time, 8);
  refused("t.std", "t.std: the Tipsy header's time (byte offset 0) is nan",
          NULL);
}

/* Random damage (a byte changed anywhere, bytes changed in the headers
 * and first markers, a cut anywhere) never crashes or hangs the tool: it
 * reads the file or refuses it with exit status 1 and a message naming
 * the file. */
Test(binary_errors, damaged_files_never_crash, .timeout = 300) {
  const size_t count[NTYPES] = {3, 5, 0, 0, 4, 0};
  model m = model_random(count, 3, 1);
  gadget_options g1 = gadget_defaults(), g2 = gadget_defaults();
  g1.massarr[1] = 0.5;
  g2.format = 2;
  g2.little = 0;
  g2.real_width = g2.id_width = 8;
  uint64_t s = (uint64_t)getpid() * 2654435761u;
  for (int f = 0; f < 3; f++) {
    for (int trial = 0; trial < 30; trial++) {
      if (f == 0)
        tipsy_write(&m, 0.5, 0, 1, sp("d.bin"));
      else
        gadget_write(&m, f == 1 ? &g1 : &g2, sp("d.bin"), NULL);
      size_t len;
      unsigned char *b = read_bytes(sp("d.bin"), &len);
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const size_t r = (size_t)(s >> 33);
      const int kind = trial % 3;
      if (kind == 0)
        b[r % len] = (unsigned char)(r >> 8);
      for (int k = 0; kind == 1 && k < 4; k++)
        b[(r >> (4 * k)) % (len < 300 ? len : 300)] = (unsigned char)(r >> k);
      write_bytes(sp("d.bin"), b, kind == 2 ? r % len : len);
      free(b);
      const int code = RUN("forces", "--in", sp("d.bin"), "--types", "all",
                           "--method", "reference", "--out", sp("out.txt"));
      cr_assert(code == 0 || code == 1,
                "file %d, trial %d (kind %d, r %zu): exit status %d", f, trial,
                kind, r, code);
      if (code == 1)
        assert_stderr_has("d.bin");
    }
  }
  model_free(&m);
}
