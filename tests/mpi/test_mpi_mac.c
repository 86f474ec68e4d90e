/* The opening criteria over several processes: with --mac mass and error
 * (tfmm_config.mac), the forces over the ranks meet the accuracy asked for
 * against the double-precision reference at every body, as one process
 * does, on clustered inputs with fresh seeds. The multipoles sent between
 * ranks and their receivers' tests take the criterion the configuration
 * selects (src/domain/let.c, remote.c), not only the geometric one. Run
 * under mpirun -np 1, 2, 4 (tests/mpi/CMakeLists.txt). */
#include "mpi_check.h"

typedef struct input {
  const char *name;
  size_t n;
  double eps;
} input;

static void make(const input *in, uint64_t seed, double *pos, double *mass) {
  double *vel = malloc(3 * in->n * sizeof *vel);
  if (strcmp(in->name, "merger") == 0)
    tfmm_ic_merger(in->n, seed, pos, vel, mass);
  else
    tfmm_ic_plummer(in->n, seed, pos, vel, mass);
  free(vel);
}

/* p99 over all bodies of |a - a_ref| / |a_ref| of the solver made by
 * create (over the ranks, or one process on all bodies), every rank's
 * share compared with the reference at its bodies. */
typedef struct measured {
  double ranks, one;
} measured;

static measured run(const input *in, tfmm_mac_kind mac, double accuracy,
                    uint64_t seed, int rank, int size) {
  const size_t n = in->n;
  double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
  make(in, seed, pos, mass);
  size_t m = 0;
  size_t *idx = malloc(n * sizeof *idx);
  for (size_t i = 0; i < n; i++)
    if (mpi_share(i, size) == rank)
      idx[m++] = i;
  double *mp = malloc((3 * m + 1) * sizeof *mp),
         *mm = malloc((m + 1) * sizeof *mm);
  double *acc = malloc((3 * m + 1) * sizeof *acc);
  for (size_t k = 0; k < m; k++) {
    memcpy(mp + 3 * k, pos + 3 * idx[k], 3 * sizeof *mp);
    mm[k] = mass[idx[k]];
    acc[3 * k] = acc[3 * k + 1] = acc[3 * k + 2] = NAN; /* poisoned */
  }
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = in->eps;
  cfg.mac = mac;
  cfg.accuracy = accuracy;
  const char *dev = getenv("TFMM_TEST_DEVICE");
  cfg.device = dev != NULL && strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU
                                                      : TFMM_DEVICE_CPU;
  tfmm_solver *dist = NULL, *one = NULL;
  tfmm_status st = tfmm_solver_create_mpi(&dist, &cfg, MPI_COMM_WORLD);
  CHECK(st == TFMM_OK, "create_mpi: %s", tfmm_solver_message(dist));
  st = tfmm_solver_compute(dist, m, mp, mm, acc, NULL);
  CHECK(st == TFMM_OK, "%s: %s", in->name, tfmm_solver_message(dist));
  const tfmm_dist_stats ds = *tfmm_solver_dist_stats(dist);
  /* One process on all bodies; the reference at every body of this
   * rank's share (all bodies over the ranks: no sample). */
  st = tfmm_solver_create(&one, &cfg);
  CHECK(st == TFMM_OK, "create: %s", tfmm_solver_message(one));
  double *a1 = malloc(3 * n * sizeof *a1);
  st = tfmm_solver_compute(one, n, pos, mass, a1, NULL);
  CHECK(st == TFMM_OK, "one process: %s", tfmm_solver_message(one));
  double *aref = malloc((3 * m + 1) * sizeof *aref);
  st = tfmm_solver_reference_at(one, n, pos, mass, m, idx, aref, NULL);
  CHECK(st == TFMM_OK, "reference: %s", tfmm_solver_message(one));
  double *e_ranks = malloc((m + 1) * sizeof *e_ranks),
         *e_one = malloc((m + 1) * sizeof *e_one);
  for (size_t k = 0; k < m; k++) {
    e_ranks[k] = rel3(acc + 3 * k, aref + 3 * k);
    e_one[k] = rel3(a1 + 3 * idx[k], aref + 3 * k);
  }
  const measured out = {mpi_quantile(e_ranks, (int)m, 0.99),
                        mpi_quantile(e_one, (int)m, 0.99)};
  if (rank == 0)
    printf("%-7s n %zu eps %-5g mac %-9s accuracy %.0e, %d ranks: p99 vs "
           "reference %.2e (one process %.2e); rank 0 owned %zu, ghosts %zu, "
           "multipoles %zu\n",
           in->name, n, in->eps, tfmm_mac_name(mac), accuracy, size, out.ranks,
           out.one, ds.owned, ds.ghosts, ds.let_cells);
  CHECK(out.one <= accuracy, "%s mac %s: one process p99 %.3e > %.0e", in->name,
        tfmm_mac_name(mac), out.one, accuracy);
  CHECK(out.ranks <= accuracy, "%s mac %s over %d ranks: p99 %.3e > %.0e",
        in->name, tfmm_mac_name(mac), size, out.ranks, accuracy);
  tfmm_solver_destroy(dist);
  tfmm_solver_destroy(one);
  free(pos), free(mass), free(idx), free(mp), free(mm), free(acc), free(a1);
  free(aref), free(e_ranks), free(e_one);
  return out;
}

int main(int argc, char **argv) {
  int rank, size;
  const uint64_t seed = mpi_start(&argc, &argv, &rank, &size);
  const input inputs[] = {{"plummer", 8000, 0.0}, {"merger", 8000, 0.01}};
  const tfmm_mac_kind macs[] = {TFMM_MAC_MASS, TFMM_MAC_ERROR};
  const double targets[] = {1e-3, 1e-5};
  for (int q = 0; q < 2; q++)
    for (int a = 0; a < 2; a++)
      for (int k = 0; k < 2; k++)
        run(&inputs[k], macs[q], targets[a], seed + (uint64_t)k, rank, size);
  return mpi_finish("test_mpi_mac");
}
