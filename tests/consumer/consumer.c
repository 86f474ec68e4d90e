/* Two bodies through the installed library: a_0 = G m_1 / d^2. */
#include <tilefmm.h>

#include <math.h>
#include <stdio.h>

int main(void) {
  tfmm_config cfg;
  tfmm_config_defaults(&cfg);
  cfg.method = TFMM_METHOD_REFERENCE;
  tfmm_solver *s = NULL;
  if (tfmm_solver_create(&s, &cfg) != TFMM_OK) {
    fprintf(stderr, "create: %s\n", tfmm_solver_message(s));
    return 1;
  }
  double pos[6] = {0, 0, 0, 2, 0, 0}, mass[2] = {1, 3}, acc[6], pot[2];
  int ok = tfmm_solver_compute(s, 2, pos, mass, acc, pot) == TFMM_OK &&
           fabs(acc[0] - 0.75) < 1e-15 && fabs(pot[1] + 0.5) < 1e-15;
  printf("tilefmm %s: %s\n", tfmm_version(), ok ? "ok" : "WRONG");
  tfmm_solver_destroy(s);
  return ok ? 0 : 1;
}
