/* The opening criteria over several processes: with --mac mass and error
 * (tfmm_config.mac), the forces over the ranks meet the accuracy asked for
 * against the double-precision reference at every body, as one process
 * does, on clustered inputs with fresh seeds. The multipoles sent between
 * ranks and their receivers' tests take the criterion the configuration
 * selects (src/domain/let.c, remote.c), not only the geometric one. Run
 * under mpirun -np 2 and 4 (tests/mpi/CMakeLists.txt; one rank is the
 * solver of one process). */
#include "mpi_check.h"

/* One input over the ranks: each rank's share (idx, m bodies: mp, mm)
 * and the double-precision reference at it (aref), made once. */
typedef struct share {
  size_t n, m, *idx;
  double *pos, *mass, *mp, *mm, *aref;
} share;

static share make_share(const input *in, uint64_t seed, int rank, int size) {
  share sh = {.n = in->n};
  const size_t n = in->n;
  sh.pos = malloc(3 * n * sizeof *sh.pos);
  sh.mass = malloc(n * sizeof *sh.mass);
  mpi_make(in, seed, sh.pos, sh.mass);
  sh.idx = malloc(n * sizeof *sh.idx);
  for (size_t i = 0; i < n; i++)
    if (mpi_share(i, size) == rank)
      sh.idx[sh.m++] = i;
  sh.mp = malloc((3 * sh.m + 1) * sizeof *sh.mp);
  sh.mm = malloc((sh.m + 1) * sizeof *sh.mm);
  for (size_t k = 0; k < sh.m; k++) {
    memcpy(sh.mp + 3 * k, sh.pos + 3 * sh.idx[k], 3 * sizeof *sh.mp);
    sh.mm[k] = sh.mass[sh.idx[k]];
  }
  /* The reference at every body of this rank's share (all bodies over the
   * ranks: no sample). */
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.eps = in->eps;
  tfmm_solver *one = NULL;
  tfmm_status st = tfmm_solver_create(&one, &cfg);
  CHECK(st == TFMM_OK, "create: %s", tfmm_solver_message(one));
  sh.aref = malloc((3 * sh.m + 1) * sizeof *sh.aref);
  st = tfmm_solver_reference_at(one, n, sh.pos, sh.mass, sh.m, sh.idx, sh.aref,
                                NULL);
  CHECK(st == TFMM_OK, "reference: %s", tfmm_solver_message(one));
  tfmm_solver_destroy(one);
  return sh;
}

static void free_share(share *sh) {
  free(sh->pos), free(sh->mass), free(sh->idx), free(sh->mp), free(sh->mm);
  free(sh->aref);
}

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
    share sh = make_share(&inputs[k], seed + (uint64_t)k, rank, size);
    for (int q = 0; q < 2; q++)
      for (int a = 0; a < 2; a++)
        run(&inputs[k], &sh, macs[q], targets[a], rank, size);
    free_share(&sh);
  }
  return mpi_finish("test_mpi_mac");
}
