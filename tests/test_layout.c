/* tfmm_struct_layout and tfmm_struct_fields: what bindings check their
 * copies of the public structs against (python/tilefmm/_lib.py). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <tilefmm.h>

static const char *const types[] = {"tfmm_config",      "tfmm_stats",
                                    "tfmm_diagnostics", "tfmm_sim_config",
                                    "tfmm_sim_state",   "tfmm_step_stats"};
#define NTYPES (sizeof types / sizeof types[0])

static size_t size_of(const char *type, const char *field) {
  size_t offset = 1, size = 0;
  cr_assert_eq(tfmm_struct_layout(type, field, &offset, &size), TFMM_OK,
               "%s.%s unknown", type, field != NULL ? field : "(struct)");
  return size;
}

static size_t offset_of(const char *type, const char *field) {
  size_t offset = 0, size = 0;
  cr_assert_eq(tfmm_struct_layout(type, field, &offset, &size), TFMM_OK);
  return offset;
}

Test(layout, matches_the_compilers_offsets_and_sizes) {
  cr_assert_eq(size_of("tfmm_config", NULL), sizeof(tfmm_config));
  cr_assert_eq(offset_of("tfmm_config", NULL), 0);
  cr_assert_eq(size_of("tfmm_sim_config", NULL), sizeof(tfmm_sim_config));
  cr_assert_eq(offset_of("tfmm_config", "eps"), offsetof(tfmm_config, eps));
  cr_assert_eq(size_of("tfmm_config", "box_min"), 3 * sizeof(double));
  cr_assert_eq(offset_of("tfmm_config", "gpu_bodies_per_thread"),
               offsetof(tfmm_config, gpu_bodies_per_thread));
  cr_assert_eq(offset_of("tfmm_stats", "tree_time.moments"),
               offsetof(tfmm_stats, tree_time.moments));
  cr_assert_eq(size_of("tfmm_stats", "device_name"), 128);
  cr_assert_eq(offset_of("tfmm_sim_config", "dt_min"),
               offsetof(tfmm_sim_config, dt_min));
  cr_assert_eq(offset_of("tfmm_sim_state", "bins"),
               offsetof(tfmm_sim_state, bins));
  cr_assert_eq(size_of("tfmm_step_stats", NULL), sizeof(tfmm_step_stats));
  cr_assert_eq(size_of("tfmm_diagnostics", "centre_of_mass"),
               3 * sizeof(double));
}

Test(layout, unknown_names_are_refused_and_outputs_kept) {
  size_t offset = 7, size = 9;
  cr_assert_eq(tfmm_struct_layout("tfmm_configs", NULL, &offset, &size),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_struct_layout("tfmm_config", "epsilon", &offset, &size),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_struct_layout(NULL, "eps", &offset, &size),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(tfmm_struct_layout("tfmm_config", "eps", NULL, &size),
               TFMM_ERR_INVALID_ARGUMENT);
  cr_assert_eq(offset, 7);
  cr_assert_eq(size, 9);
  cr_assert_eq(tfmm_struct_fields("tfmm_solver", NULL, 0), -1);
  cr_assert_eq(tfmm_struct_fields(NULL, NULL, 0), -1);
}

/* Every top-level field listed: sorted by offset, the fields leave no gap
 * but padding (less than 8 bytes, before a field on an 8-byte boundary)
 * and end within 8 bytes of the struct's size, so that a field missing
 * from the table (one a binding would not know of) fails here. */
Test(layout, the_fields_cover_each_struct) {
  for (size_t t = 0; t < NTYPES; t++) {
    const int count = tfmm_struct_fields(types[t], NULL, 0);
    cr_assert_gt(count, 0, "%s", types[t]);
    const char **names = calloc((size_t)count, sizeof *names);
    cr_assert_eq(tfmm_struct_fields(types[t], names, count), count);
    size_t end = 0;
    for (int k = 0; k < count; k++) {
      if (strchr(names[k], '.') != NULL)
        continue; /* a member of a nested struct, inside its field */
      size_t offset, size;
      cr_assert_eq(tfmm_struct_layout(types[t], names[k], &offset, &size),
                   TFMM_OK);
      cr_assert_geq(offset, end, "%s.%s overlaps the field before it", types[t],
                    names[k]);
      cr_assert(offset == end || (offset - end < 8 && offset % 8 == 0),
                "%s: a gap of %zu bytes before %s: a field not listed?",
                types[t], offset - end, names[k]);
      end = offset + size;
    }
    const size_t whole = size_of(types[t], NULL);
    cr_assert(end <= whole && whole - end < 8,
              "%s: fields end at %zu of %zu bytes: a field not listed?",
              types[t], end, whole);
    free(names);
  }
}

Test(layout, fields_are_listed_in_declaration_order) {
  const char *names[64];
  const int count = tfmm_struct_fields("tfmm_sim_config", names, 64);
  cr_assert_eq(count, 7);
  cr_assert_str_eq(names[0], "solver");
  cr_assert_str_eq(names[5], "dt_min");
  cr_assert_str_eq(names[6], "keep_tree");
  /* A short buffer gets the first names and the whole count. */
  const char *first[2] = {NULL, NULL};
  cr_assert_eq(tfmm_struct_fields("tfmm_config", first, 2),
               tfmm_struct_fields("tfmm_config", NULL, 0));
  cr_assert_str_eq(first[0], "G");
  cr_assert_str_eq(first[1], "eps");
}
