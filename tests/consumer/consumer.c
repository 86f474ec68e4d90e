/* A program outside tilefmm that uses the installed library: the solver
 * (two bodies: a_0 = G m_1 / d^2) and the simulation object (a circular
 * binary stepped for a period: back where it started, its energy kept). */
#include <tilefmm.h>

#include <math.h>
#include <stdio.h>

static int forces(void) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_REFERENCE;
  tfmm_solver *s = NULL;
  if (tfmm_solver_create(&s, &cfg) != TFMM_OK) {
    fprintf(stderr, "create: %s\n", tfmm_solver_message(s));
    tfmm_solver_destroy(s);
    return 0;
  }
  double pos[6] = {0, 0, 0, 2, 0, 0}, mass[2] = {1, 3}, acc[6], pot[2];
  const int ok = tfmm_solver_compute(s, 2, pos, mass, acc, pot) == TFMM_OK &&
                 fabs(acc[0] - 0.75) < 1e-15 && fabs(pot[1] + 0.5) < 1e-15;
  tfmm_solver_destroy(s);
  return ok;
}

/* Two bodies of mass 1/2 a distance 1 apart on a circular orbit (angular
 * velocity 1, period 2 pi), 1000 steps a period. */
static int simulation(void) {
  const double pi = 3.14159265358979323846;
  const double pos[6] = {-0.5, 0, 0, 0.5, 0, 0};
  const double vel[6] = {0, -0.5, 0, 0, 0.5, 0}, mass[2] = {0.5, 0.5};
  tfmm_sim_config cfg;
  tfmm_sim_config_defaults(&cfg);
  cfg.solver.method = TFMM_METHOD_REFERENCE;
  cfg.dt = 2 * pi / 1000;
  tfmm_sim *sim = NULL;
  tfmm_status st = tfmm_sim_create(&sim, &cfg, 2, pos, vel, mass, NULL);
  if (st == TFMM_OK)
    st = tfmm_sim_advance_to(sim, 2 * pi);
  tfmm_diagnostics d;
  double error = NAN;
  tfmm_sim_state state;
  if (st == TFMM_OK)
    st = tfmm_sim_diagnostics(sim, &d, &error);
  if (st == TFMM_OK)
    st = tfmm_sim_save(sim, &state);
  if (st != TFMM_OK) {
    fprintf(stderr, "simulation: %s\n", tfmm_sim_message(sim));
    tfmm_sim_destroy(sim);
    return 0;
  }
  const int ok = tfmm_sim_steps(sim) == 1000 && fabs(error) < 1e-4 &&
                 hypot(state.pos[3] - 0.5, state.pos[4]) < 1e-3;
  tfmm_sim_destroy(sim);
  return ok;
}

int main(void) {
  const int ok = forces() && simulation();
  printf("tilefmm %s: %s\n", tfmm_version(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
