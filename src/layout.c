/* The layout of the public structs as this library was compiled
 * (tfmm_struct_layout): a table of offsetof and sizeof, so that a binding
 * in another language (python/tilefmm/_lib.py) can check, field by field,
 * that its copy of each struct is this one before it passes one in. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

typedef struct layout_entry {
  const char *type, *field; /* field NULL: the struct itself */
  size_t offset, size;
} layout_entry;

#define STRUCT(T)                                                              \
  { #T, NULL, 0, sizeof(T) }
#define FIELD(T, f)                                                            \
  { #T, #f, offsetof(T, f), sizeof(((T *)0)->f) }

static const layout_entry entries[] = {
    STRUCT(tfmm_config),
    FIELD(tfmm_config, G),
    FIELD(tfmm_config, eps),
    FIELD(tfmm_config, softening),
    FIELD(tfmm_config, precision),
    FIELD(tfmm_config, method),
    FIELD(tfmm_config, device),
    FIELD(tfmm_config, accuracy),
    FIELD(tfmm_config, theta),
    FIELD(tfmm_config, order),
    FIELD(tfmm_config, mac),
    FIELD(tfmm_config, mac_epsilon),
    FIELD(tfmm_config, leaf_size),
    FIELD(tfmm_config, max_depth),
    FIELD(tfmm_config, box_min),
    FIELD(tfmm_config, box_size),
    FIELD(tfmm_config, num_threads),
    FIELD(tfmm_config, gpu_id),
    FIELD(tfmm_config, schedule),
    FIELD(tfmm_config, tree_device),
    FIELD(tfmm_config, far_device),
    FIELD(tfmm_config, near_only),
    FIELD(tfmm_config, gpu_tile),
    FIELD(tfmm_config, gpu_threads_per_body),
    FIELD(tfmm_config, gpu_unroll),
    FIELD(tfmm_config, gpu_bodies_per_thread),
    FIELD(tfmm_config, measure),
    FIELD(tfmm_config, error_sample),
    FIELD(tfmm_config, verify),
    FIELD(tfmm_config, far_kernel),

    STRUCT(tfmm_stats),
    FIELD(tfmm_stats, method),
    FIELD(tfmm_stats, device),
    FIELD(tfmm_stats, n),
    FIELD(tfmm_stats, interactions),
    FIELD(tfmm_stats, m2l),
    FIELD(tfmm_stats, m2p),
    FIELD(tfmm_stats, tree_depth),
    FIELD(tfmm_stats, tree_cells),
    FIELD(tfmm_stats, tree_leaves),
    FIELD(tfmm_stats, leaf_min),
    FIELD(tfmm_stats, leaf_max),
    FIELD(tfmm_stats, leaf_mean),
    FIELD(tfmm_stats, tree_refits),
    FIELD(tfmm_stats, tree_growth),
    FIELD(tfmm_stats, leaf_size),
    FIELD(tfmm_stats, theta),
    FIELD(tfmm_stats, order),
    FIELD(tfmm_stats, precision),
    FIELD(tfmm_stats, mac_epsilon),
    FIELD(tfmm_stats, far_kernel),
    FIELD(tfmm_stats, softening_separation),
    FIELD(tfmm_stats, schedule),
    FIELD(tfmm_stats, lists_device),
    FIELD(tfmm_stats, near_device),
    FIELD(tfmm_stats, tree_device),
    FIELD(tfmm_stats, far_device),
    FIELD(tfmm_stats, near_time),
    FIELD(tfmm_stats, near_kernel_time),
    FIELD(tfmm_stats, far_time),
    FIELD(tfmm_stats, overlap),
    FIELD(tfmm_stats, near_rate),
    FIELD(tfmm_stats, tree_time),
    FIELD(tfmm_stats, tree_time.keys),
    FIELD(tfmm_stats, tree_time.sort),
    FIELD(tfmm_stats, tree_time.permute),
    FIELD(tfmm_stats, tree_time.build),
    FIELD(tfmm_stats, tree_time.moments),
    FIELD(tfmm_stats, time),
    FIELD(tfmm_stats, time_total),
    FIELD(tfmm_stats, device_bytes),
    FIELD(tfmm_stats, gpu_tile),
    FIELD(tfmm_stats, gpu_threads_per_body),
    FIELD(tfmm_stats, gpu_unroll),
    FIELD(tfmm_stats, gpu_bodies_per_thread),
    FIELD(tfmm_stats, device_name),
    FIELD(tfmm_stats, targets),
    FIELD(tfmm_stats, error),
    FIELD(tfmm_stats, error.measured),
    FIELD(tfmm_stats, error.samples),
    FIELD(tfmm_stats, error.median),
    FIELD(tfmm_stats, error.p99),
    FIELD(tfmm_stats, error.max),
    FIELD(tfmm_stats, error.p99_bound),
    FIELD(tfmm_stats, error.confidence),
    FIELD(tfmm_stats, error.worst_body),
    FIELD(tfmm_stats, error.time),
    FIELD(tfmm_stats, error.group_bodies),
    FIELD(tfmm_stats, error.group_measured),
    FIELD(tfmm_stats, error.group_median),
    FIELD(tfmm_stats, error.group_p99),
    FIELD(tfmm_stats, error.group_max),
    FIELD(tfmm_stats, plan),

    STRUCT(tfmm_choice),
    FIELD(tfmm_choice, chosen),
    FIELD(tfmm_choice, theta),
    FIELD(tfmm_choice, order),
    FIELD(tfmm_choice, factor),
    FIELD(tfmm_choice, since),
    FIELD(tfmm_choice, evaluations),
    FIELD(tfmm_choice, n),
    FIELD(tfmm_choice, accuracy),
    FIELD(tfmm_choice, leaf),
    FIELD(tfmm_choice, near_gpu),
    FIELD(tfmm_choice, precision),
    FIELD(tfmm_choice, failed_cost),
    FIELD(tfmm_choice, epsilon),

    STRUCT(tfmm_diagnostics),
    FIELD(tfmm_diagnostics, mass),
    FIELD(tfmm_diagnostics, kinetic),
    FIELD(tfmm_diagnostics, potential),
    FIELD(tfmm_diagnostics, total),
    FIELD(tfmm_diagnostics, virial_ratio),
    FIELD(tfmm_diagnostics, momentum),
    FIELD(tfmm_diagnostics, angular_momentum),
    FIELD(tfmm_diagnostics, centre_of_mass),

    STRUCT(tfmm_sim_config),
    FIELD(tfmm_sim_config, solver),
    FIELD(tfmm_sim_config, dt),
    FIELD(tfmm_sim_config, time_initial),
    FIELD(tfmm_sim_config, eta),
    FIELD(tfmm_sim_config, dt_max),
    FIELD(tfmm_sim_config, dt_min),
    FIELD(tfmm_sim_config, keep_tree),

    STRUCT(tfmm_sim_state),
    FIELD(tfmm_sim_state, n),
    FIELD(tfmm_sim_state, pos),
    FIELD(tfmm_sim_state, vel),
    FIELD(tfmm_sim_state, mass),
    FIELD(tfmm_sim_state, acc),
    FIELD(tfmm_sim_state, pot),
    FIELD(tfmm_sim_state, ids),
    FIELD(tfmm_sim_state, step),
    FIELD(tfmm_sim_state, time_initial),
    FIELD(tfmm_sim_state, energy_initial),
    FIELD(tfmm_sim_state, ticks),
    FIELD(tfmm_sim_state, tick),
    FIELD(tfmm_sim_state, bins),
    FIELD(tfmm_sim_state, choice),
    FIELD(tfmm_sim_state, choice.chosen),
    FIELD(tfmm_sim_state, choice.theta),
    FIELD(tfmm_sim_state, choice.order),
    FIELD(tfmm_sim_state, choice.factor),
    FIELD(tfmm_sim_state, choice.since),
    FIELD(tfmm_sim_state, choice.evaluations),
    FIELD(tfmm_sim_state, choice.n),
    FIELD(tfmm_sim_state, choice.accuracy),
    FIELD(tfmm_sim_state, choice.leaf),
    FIELD(tfmm_sim_state, choice.near_gpu),
    FIELD(tfmm_sim_state, choice.precision),
    FIELD(tfmm_sim_state, choice.failed_cost),
    FIELD(tfmm_sim_state, choice.epsilon),

    STRUCT(tfmm_step_stats),
    FIELD(tfmm_step_stats, steps),
    FIELD(tfmm_step_stats, evaluations),
    FIELD(tfmm_step_stats, time_integrate),
    FIELD(tfmm_step_stats, time_forces),
    FIELD(tfmm_step_stats, time_total),
    FIELD(tfmm_step_stats, updates),
    FIELD(tfmm_step_stats, short_steps),
    FIELD(tfmm_step_stats, time_tree),
    FIELD(tfmm_step_stats, time_lists),
    FIELD(tfmm_step_stats, time_near),
    FIELD(tfmm_step_stats, time_far),
    FIELD(tfmm_step_stats, tree_refits),
    FIELD(tfmm_step_stats, direct_substeps),

    STRUCT(tfmm_unit_system),
    FIELD(tfmm_unit_system, mass),
    FIELD(tfmm_unit_system, length),
    FIELD(tfmm_unit_system, velocity),
    FIELD(tfmm_unit_system, current),
    FIELD(tfmm_unit_system, temperature),

    STRUCT(tfmm_attr),
    FIELD(tfmm_attr, name),
    FIELD(tfmm_attr, value),

    STRUCT(tfmm_snapshot),
    FIELD(tfmm_snapshot, n),
    FIELD(tfmm_snapshot, time),
    FIELD(tfmm_snapshot, pos),
    FIELD(tfmm_snapshot, vel),
    FIELD(tfmm_snapshot, mass),
    FIELD(tfmm_snapshot, acc),
    FIELD(tfmm_snapshot, pot),
    FIELD(tfmm_snapshot, ids),
    FIELD(tfmm_snapshot, bins),
    FIELD(tfmm_snapshot, params),
    FIELD(tfmm_snapshot, nparams),
    FIELD(tfmm_snapshot, state),
    FIELD(tfmm_snapshot, nstate),
    FIELD(tfmm_snapshot, units),
    FIELD(tfmm_snapshot, units.mass),
    FIELD(tfmm_snapshot, units.length),
    FIELD(tfmm_snapshot, units.velocity),
    FIELD(tfmm_snapshot, units.current),
    FIELD(tfmm_snapshot, units.temperature),
    FIELD(tfmm_snapshot, units_source),
    FIELD(tfmm_snapshot, G),
    FIELD(tfmm_snapshot, format),
    FIELD(tfmm_snapshot, note),
    FIELD(tfmm_snapshot, files),
    FIELD(tfmm_snapshot, nfiles),

    STRUCT(tfmm_snapshot_output),
    FIELD(tfmm_snapshot_output, fields),
    FIELD(tfmm_snapshot_output, single),
    FIELD(tfmm_snapshot_output, compression),

    STRUCT(tfmm_read_options),
    FIELD(tfmm_read_options, format),
    FIELD(tfmm_read_options, types),
    FIELD(tfmm_read_options, attributes),
    FIELD(tfmm_read_options, flag),
    STRUCT(tfmm_plan),
    FIELD(tfmm_plan, method),
    FIELD(tfmm_plan, device),
    FIELD(tfmm_plan, schedule),
    FIELD(tfmm_plan, tree_device),
    FIELD(tfmm_plan, far_device),
    FIELD(tfmm_plan, leaf_size),
    FIELD(tfmm_plan, theta),
    FIELD(tfmm_plan, order),
    FIELD(tfmm_plan, precision),
    FIELD(tfmm_plan, mac),
    FIELD(tfmm_plan, mac_epsilon),
    FIELD(tfmm_plan, separation),
    FIELD(tfmm_plan, far_kernel),
};

static int same(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

tfmm_status tfmm_struct_layout(const char *type, const char *field,
                               size_t *offset, size_t *size) {
  if (type == NULL || offset == NULL || size == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  for (size_t k = 0; k < sizeof entries / sizeof entries[0]; k++)
    if (strcmp(entries[k].type, type) == 0 && same(entries[k].field, field)) {
      *offset = entries[k].offset;
      *size = entries[k].size;
      return TFMM_OK;
    }
  return TFMM_ERR_INVALID_ARGUMENT;
}

int tfmm_struct_fields(const char *type, const char **names, int size) {
  if (type == NULL)
    return -1;
  int count = 0, found = 0;
  for (size_t k = 0; k < sizeof entries / sizeof entries[0]; k++) {
    if (strcmp(entries[k].type, type) != 0)
      continue;
    found = 1;
    if (entries[k].field == NULL)
      continue;
    if (names != NULL && count < size)
      names[count] = entries[k].field;
    count++;
  }
  return found ? count : -1;
}
