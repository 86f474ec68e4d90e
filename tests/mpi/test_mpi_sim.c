/* Simulations over several processes (tfmm_sim_create_mpi): the same
 * motion as one process within what the force accuracy allows, with one
 * global step and with individual steps, bodies migrating between ranks;
 * and a state saved over P ranks restored over P/2 (any number) continuing
 * as the sim it was saved from. Run under mpirun -np 1, 2, 4. */
#include "mpi_check.h"

enum { N = 4000, WIDTH = 14 };

/* Every body's state, by id, on every rank of comm: pos, vel, acc, pot,
 * mass, bin (WIDTH doubles at (id - 1) * WIDTH). */
static double *gather_by_id(tfmm_sim *sim, MPI_Comm comm) {
  tfmm_sim_state st;
  CHECK(tfmm_sim_save(sim, &st) == TFMM_OK, "save: %s", tfmm_sim_message(sim));
  int size;
  MPI_Comm_size(comm, &size);
  double *mine = malloc((st.n + 1) * (WIDTH + 1) * sizeof *mine);
  for (size_t i = 0; i < st.n; i++) {
    double *r = mine + (WIDTH + 1) * i;
    memcpy(r, st.pos + 3 * i, 3 * sizeof *r);
    memcpy(r + 3, st.vel + 3 * i, 3 * sizeof *r);
    memcpy(r + 6, st.acc + 3 * i, 3 * sizeof *r);
    r[9] = st.pot[i];
    r[10] = st.mass[i];
    r[11] = st.bins != NULL ? st.bins[i] : 0;
    r[12] = 0;
    r[13] = 0;
    r[14] = (double)st.ids[i];
  }
  int count = (int)(st.n * (WIDTH + 1));
  int *counts = malloc(size * sizeof *counts),
      *displ = malloc(size * sizeof *displ);
  MPI_Allgather(&count, 1, MPI_INT, counts, 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; r++)
    displ[r] = total, total += counts[r];
  double *all = malloc((total + 1) * sizeof *all);
  MPI_Allgatherv(mine, count, MPI_DOUBLE, all, counts, displ, MPI_DOUBLE, comm);
  double *by_id = malloc(N * WIDTH * sizeof *by_id);
  for (int k = 0; k < N * WIDTH; k++)
    by_id[k] = NAN;
  CHECK(total == N * (WIDTH + 1), "bodies over the ranks: %d",
        total / (WIDTH + 1));
  for (int k = 0; k < total / (WIDTH + 1); k++) {
    const double *r = all + (WIDTH + 1) * k;
    const long id = (long)r[14];
    CHECK(id >= 1 && id <= N && isnan(by_id[(id - 1) * WIDTH]),
          "id %ld missing or twice", id);
    if (id >= 1 && id <= N)
      memcpy(by_id + (id - 1) * WIDTH, r, WIDTH * sizeof *r);
  }
  free(mine), free(counts), free(displ), free(all);
  return by_id;
}

/* The largest distance between the positions of two gathered states. */
static double max_offset(const double *a, const double *b) {
  double worst = 0;
  for (int i = 0; i < N; i++) {
    double d = 0;
    for (int k = 0; k < 3; k++)
      d += (a[i * WIDTH + k] - b[i * WIDTH + k]) *
           (a[i * WIDTH + k] - b[i * WIDTH + k]);
    worst = isnan(d) || sqrt(d) > worst ? sqrt(d) : worst;
  }
  return worst;
}

/* A sim of this rank's share of the bodies over comm. */
static tfmm_sim *create(const tfmm_sim_config *cfg, MPI_Comm comm,
                        const double *pos, const double *vel,
                        const double *mass) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double *p = malloc(3 * N * sizeof *p), *v = malloc(3 * N * sizeof *v);
  double *m = malloc(N * sizeof *m);
  uint64_t *ids = malloc(N * sizeof *ids);
  size_t n = 0;
  for (size_t i = 0; i < N; i++)
    if (mpi_share(i, size) == rank) {
      memcpy(p + 3 * n, pos + 3 * i, 3 * sizeof *p);
      memcpy(v + 3 * n, vel + 3 * i, 3 * sizeof *v);
      m[n] = mass[i];
      ids[n++] = i + 1;
    }
  tfmm_sim *sim = NULL;
  tfmm_status st = tfmm_sim_create_mpi(&sim, cfg, comm, n, p, v, m, ids);
  CHECK(st == TFMM_OK, "create: %s", tfmm_sim_message(sim));
  free(p), free(v), free(m), free(ids);
  return sim;
}

/* The same motion as one process: one global step, then individual
 * steps. */
static void same_motion(const tfmm_sim_config *cfg, const char *what,
                        const double *pos, const double *vel,
                        const double *mass, int syncs, double tol) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tfmm_sim *dist = create(cfg, MPI_COMM_WORLD, pos, vel, mass);
  tfmm_sim *one = NULL;
  tfmm_sim_create(&one, cfg, N, pos, vel, mass, NULL);
  const double t_end =
      cfg->time_initial + syncs * (cfg->dt_max > 0 ? cfg->dt_max : cfg->dt);
  CHECK(tfmm_sim_advance_to(dist, t_end) == TFMM_OK, "%s: %s", what,
        tfmm_sim_message(dist));
  CHECK(tfmm_sim_advance_to(one, t_end) == TFMM_OK, "%s one: %s", what,
        tfmm_sim_message(one));
  tfmm_diagnostics dd, d1;
  double err_d = NAN, err_1 = NAN;
  CHECK(tfmm_sim_diagnostics(dist, &dd, &err_d) == TFMM_OK, "diag: %s",
        tfmm_sim_message(dist));
  tfmm_sim_diagnostics(one, &d1, &err_1);
  double *a = gather_by_id(dist, MPI_COMM_WORLD),
         *b = gather_by_id(one, MPI_COMM_SELF);
  const double off = max_offset(a, b);
  if (rank == 0)
    printf("%s: t %g steps %lld (one process %lld): max offset %.2e, dE/E %.2e "
           "(one process %.2e), mass %.17g\n",
           what, tfmm_sim_time(dist), (long long)tfmm_sim_steps(dist),
           (long long)tfmm_sim_steps(one), off, err_d, err_1, dd.mass);
  CHECK(tfmm_sim_time(dist) == tfmm_sim_time(one), "%s: time %.17g vs %.17g",
        what, tfmm_sim_time(dist), tfmm_sim_time(one));
  CHECK(off < tol, "%s: positions differ by %.3e > %.1e", what, off, tol);
  CHECK(fabs(dd.mass - d1.mass) < 1e-12, "%s: mass %.17g vs %.17g", what,
        dd.mass, d1.mass);
  CHECK(fabs(err_d - err_1) < 1e-4, "%s: dE/E %.3e vs one process %.3e", what,
        err_d, err_1);
  tfmm_sim_destroy(dist);
  tfmm_sim_destroy(one);
  free(a), free(b);
}

/* Saved over every rank, restored over half of them. */
static void restart_elsewhere(const tfmm_sim_config *cfg, const double *pos,
                              const double *vel, const double *mass) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tfmm_sim *sim = create(cfg, MPI_COMM_WORLD, pos, vel, mass);
  CHECK(tfmm_sim_step(sim, 4) == TFMM_OK, "steps: %s", tfmm_sim_message(sim));
  double *saved = gather_by_id(sim, MPI_COMM_WORLD);
  tfmm_sim_state st;
  tfmm_sim_save(sim, &st);
  tfmm_sim_state scalars = st;
  /* Straight on over every rank. */
  CHECK(tfmm_sim_step(sim, 4) == TFMM_OK, "steps: %s", tfmm_sim_message(sim));
  double *straight = gather_by_id(sim, MPI_COMM_WORLD);
  const int64_t steps = tfmm_sim_steps(sim);
  const double time = tfmm_sim_time(sim);
  tfmm_sim_destroy(sim);
  /* Over half the ranks, each given a share of the saved bodies. */
  const int half = size > 1 ? size / 2 : 1;
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank < half ? 0 : MPI_UNDEFINED, rank, &sub);
  if (sub != MPI_COMM_NULL) {
    double *p = malloc(3 * N * sizeof *p), *v = malloc(3 * N * sizeof *v);
    double *a = malloc(3 * N * sizeof *a), *m = malloc(N * sizeof *m);
    double *phi = malloc(N * sizeof *phi);
    uint64_t *ids = malloc(N * sizeof *ids);
    size_t n = 0;
    for (int i = 0; i < N; i++)
      if (mpi_share((size_t)i * 7, half) == rank) {
        const double *r = saved + i * WIDTH;
        memcpy(p + 3 * n, r, 3 * sizeof *p);
        memcpy(v + 3 * n, r + 3, 3 * sizeof *v);
        memcpy(a + 3 * n, r + 6, 3 * sizeof *a);
        phi[n] = r[9];
        m[n] = r[10];
        ids[n++] = (uint64_t)i + 1;
      }
    tfmm_sim_state part = scalars;
    part.n = n, part.pos = p, part.vel = v, part.acc = a, part.pot = phi;
    part.mass = m, part.ids = ids, part.bins = NULL;
    tfmm_sim *again = NULL;
    tfmm_status s2 = tfmm_sim_restore_mpi(&again, cfg, sub, &part);
    CHECK(s2 == TFMM_OK, "restore over %d: %s", half, tfmm_sim_message(again));
    /* The planner's state over the ranks came with the checkpoint: the
     * next steps go on at its setting and its measurements' schedule. */
    tfmm_choice c = {0};
    tfmm_solver_choice(tfmm_sim_solver(again), &c);
    const tfmm_choice *was = &scalars.choice;
    CHECK(was->chosen && c.chosen == was->chosen && c.theta == was->theta &&
              c.order == was->order && c.factor == was->factor &&
              c.since == was->since && c.evaluations == was->evaluations &&
              c.n == was->n && c.failed_cost == was->failed_cost,
          "restored choice: chosen %d theta %g order %d factor %.17g since %d "
          "evaluations %llu; saved %d %g %d %.17g %d %llu",
          c.chosen, c.theta, c.order, c.factor, c.since,
          (unsigned long long)c.evaluations, was->chosen, was->theta,
          was->order, was->factor, was->since,
          (unsigned long long)was->evaluations);
    CHECK(tfmm_sim_step(again, 4) == TFMM_OK, "steps: %s",
          tfmm_sim_message(again));
    double *continued = gather_by_id(again, sub);
    const double off = max_offset(continued, straight);
    if (rank == 0)
      printf("saved over %d ranks at step 4, restored over %d: step %lld t %g; "
             "max offset from the sim straight on %.2e\n",
             size, half, (long long)tfmm_sim_steps(again), tfmm_sim_time(again),
             off);
    CHECK(tfmm_sim_steps(again) == steps && tfmm_sim_time(again) == time,
          "restored: step %lld t %.17g vs %lld %.17g",
          (long long)tfmm_sim_steps(again), tfmm_sim_time(again),
          (long long)steps, time);
    /* The forces of the two splits differ within the accuracy (1e-3 at
     * p99, far less in practice); over 4 steps of 1/128 that moves a body
     * by well under 1e-6. Bit for bit on one rank. */
    CHECK(off < (size == 1 ? 1e-300 : 1e-6), "restored: offset %.3e", off);
    tfmm_sim_destroy(again);
    free(continued), free(p), free(v), free(a), free(m), free(phi), free(ids);
    MPI_Comm_free(&sub);
  }
  free(saved), free(straight);
}

int main(int argc, char **argv) {
  int rank, size;
  const uint64_t seed = mpi_start(&argc, &argv, &rank, &size);
  double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * sizeof *vel);
  double *mass = malloc(N * sizeof *mass);
  tfmm_ic_merger(N, seed, pos, vel, mass);
  tfmm_sim_config cfg;
  tfmm_sim_config_defaults(&cfg);
  cfg.solver.eps = 0.02;
  const char *dev = getenv("TFMM_TEST_DEVICE");
  cfg.solver.device = dev != NULL && strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU
                                                             : TFMM_DEVICE_CPU;
  /* One global step of 1/128, 8 steps: moves within 1e-5 of one process. */
  same_motion(&cfg, "global step", pos, vel, mass, 8, 1e-5);
  /* Individual steps: bins from the accelerations, which differ at the
   * 1e-4 level; a body near a bin boundary may take another bin, which
   * moves it by about a^2 dt^3 ~ 1e-4 at most here. */
  tfmm_sim_config ind = cfg;
  ind.eta = 0.002;
  ind.dt_max = 1.0 / 32;
  same_motion(&ind, "individual steps", pos, vel, mass, 2, 1e-3);
  restart_elsewhere(&cfg, pos, vel, mass);
  free(pos), free(vel), free(mass);
  return mpi_finish("test_mpi_sim");
}
