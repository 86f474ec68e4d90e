/* The opening criteria over several processes: with --mac mass and error
 * (tfmm_config.mac), the forces over the ranks meet the accuracy asked for
 * against the double-precision reference at every body, as one process
 * does, on clustered inputs with fresh seeds. The multipoles sent between
 * ranks and their receivers' tests take the criterion the configuration
 * selects (src/domain/let.c, remote.c), not only the geometric one. Run
 * under mpirun -np 2 and 4 (tests/mpi/CMakeLists.txt; one rank is the
 * solver of one process). */
#include "mpi_check.h"

/* The p99 over all bodies of |a - a_ref| / |a_ref|, over the ranks and of
 * one process on all bodies, with criterion mac at the target accuracy. */
static void run(const input *in, const share *sh, tfmm_mac_kind mac,
                double accuracy, int rank, int size) {
  const size_t n = sh->n, m = sh->m;
  double *acc = malloc((3 * m + 1) * sizeof *acc);
  for (size_t k = 0; k < 3 * m; k++)
    acc[k] = NAN; /* poisoned */
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
  st = tfmm_solver_compute(dist, m, sh->mp, sh->mm, acc, NULL);
  CHECK(st == TFMM_OK, "%s: %s", in->name, tfmm_solver_message(dist));
  const tfmm_dist_stats ds = *tfmm_solver_dist_stats(dist);
  st = tfmm_solver_create(&one, &cfg);
  CHECK(st == TFMM_OK, "create: %s", tfmm_solver_message(one));
  double *a1 = malloc(3 * n * sizeof *a1);
  st = tfmm_solver_compute(one, n, sh->pos, sh->mass, a1, NULL);
  CHECK(st == TFMM_OK, "one process: %s", tfmm_solver_message(one));
  double *e_ranks = malloc((m + 1) * sizeof *e_ranks),
         *e_one = malloc((m + 1) * sizeof *e_one);
  for (size_t k = 0; k < m; k++) {
    e_ranks[k] = rel3(acc + 3 * k, sh->aref + 3 * k);
    e_one[k] = rel3(a1 + 3 * sh->idx[k], sh->aref + 3 * k);
  }
  const double p99_ranks = mpi_quantile(e_ranks, (int)m, 0.99),
               p99_one = mpi_quantile(e_one, (int)m, 0.99);
  if (rank == 0)
    printf("%-7s n %zu eps %-5g mac %-9s accuracy %.0e, %d ranks: p99 vs "
           "reference %.2e (one process %.2e); rank 0 owned %zu, ghosts %zu, "
           "multipoles %zu\n",
           in->name, n, in->eps, tfmm_mac_name(mac), accuracy, size, p99_ranks,
           p99_one, ds.owned, ds.ghosts, ds.let_cells);
  CHECK(p99_one <= accuracy, "%s mac %s: one process p99 %.3e > %.0e", in->name,
        tfmm_mac_name(mac), p99_one, accuracy);
  CHECK(p99_ranks <= accuracy, "%s mac %s over %d ranks: p99 %.3e > %.0e",
        in->name, tfmm_mac_name(mac), size, p99_ranks, accuracy);
  tfmm_solver_destroy(dist);
  tfmm_solver_destroy(one);
  free(acc), free(a1), free(e_ranks), free(e_one);
}

int main(int argc, char **argv) {
  int rank, size;
  const uint64_t seed = mpi_start(&argc, &argv, &rank, &size);
  const input inputs[] = {{"plummer", 8000, 0.0}, {"merger", 8000, 0.01}};
  const tfmm_mac_kind macs[] = {TFMM_MAC_MASS, TFMM_MAC_ERROR};
  const double targets[] = {1e-3, 1e-5};
  for (int k = 0; k < 2; k++) {
    share sh = mpi_share_make(&inputs[k], seed + (uint64_t)k, rank, size, 1);
    for (int q = 0; q < 2; q++)
      for (int a = 0; a < 2; a++)
        run(&inputs[k], &sh, macs[q], targets[a], rank, size);
    mpi_share_free(&sh);
  }
  return mpi_finish("test_mpi_mac");
}
