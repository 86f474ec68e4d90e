/* The library's side of bench/compare_bits.sh: forces, forces at a subset
 * and a few simulation steps on fixed inputs and seeds, each case's
 * numbers written raw (native doubles, then the integers) to
 * OUT_DIR/CASE.bin so that the script can hash them. Only the public
 * header is used, so that the same file builds against the library before
 * and after a refactor.
 *   compare_bits_lib OUT_DIR cpu|gpu
 * Exit status 0 when every case ran; 1 otherwise (the failing case named
 * on stderr, the other cases still written). */
#include <tilefmm.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_dir;
static int failures = 0;

/* Writes k arrays of doubles (lengths given) to OUT_DIR/name.bin. */
static void write_case(const char *name, int k, const double *const *arrays,
                       const size_t *lengths) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.bin", out_dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "%s: cannot write\n", path);
    failures++;
    return;
  }
  for (int i = 0; i < k; i++)
    fwrite(arrays[i], sizeof(double), lengths[i], f);
  fclose(f);
}

static void fail(const char *name, const char *what, const char *message) {
  fprintf(stderr, "%s: %s: %s\n", name, what, message ? message : "");
  failures++;
}

typedef struct bodies {
  size_t n;
  double *pos, *vel, *mass;
} bodies;

static bodies make(const char *model, size_t n, uint64_t seed) {
  bodies b = {n, malloc(3 * n * sizeof(double)), malloc(3 * n * sizeof(double)),
              malloc(n * sizeof(double))};
  if (strcmp(model, "merger") == 0)
    tfmm_ic_merger(n, seed, b.pos, b.vel, b.mass);
  else
    tfmm_ic_plummer(n, seed, b.pos, b.vel, b.mass);
  return b;
}

static void release(bodies *b) { free(b->pos), free(b->vel), free(b->mass); }

/* One force evaluation (all bodies, or those marked in active). */
static void forces(const char *name, const bodies *b, const tfmm_config *c,
                   const unsigned char *active) {
  double *acc = calloc(3 * b->n, sizeof *acc), *pot = calloc(b->n, sizeof *pot);
  tfmm_solver *s = NULL;
  tfmm_status st = tfmm_solver_create(&s, c);
  if (st == TFMM_OK)
    st = active ? tfmm_solver_compute_active(s, b->n, b->pos, b->mass, active,
                                             acc, pot)
                : tfmm_solver_compute(s, b->n, b->pos, b->mass, acc, pot);
  if (st != TFMM_OK)
    fail(name, "compute", tfmm_solver_message(s));
  else {
    const double *arrays[] = {acc, pot};
    const size_t lengths[] = {3 * b->n, b->n};
    write_case(name, 2, arrays, lengths);
  }
  tfmm_solver_destroy(s);
  free(acc), free(pot);
}

/* steps steps of a sim (eta > 0: individual steps), then its state. */
static void sim(const char *name, const bodies *b, const tfmm_config *c,
                double eta, int64_t steps) {
  tfmm_sim_config sc;
  tfmm_sim_config_defaults(&sc);
  sc.solver = *c;
  if (eta > 0)
    sc.eta = eta;
  tfmm_sim *s = NULL;
  tfmm_status st =
      tfmm_sim_create(&s, &sc, b->n, b->pos, b->vel, b->mass, NULL);
  if (st == TFMM_OK)
    st = tfmm_sim_step(s, steps);
  tfmm_sim_state state;
  if (st == TFMM_OK)
    st = tfmm_sim_save(s, &state);
  if (st != TFMM_OK)
    fail(name, "sim", tfmm_sim_message(s));
  else {
    const double scalars[] = {(double)state.step,   state.time_initial,
                              state.energy_initial, (double)state.ticks,
                              state.tick,           tfmm_sim_time(s)};
    const double *arrays[] = {state.pos, state.vel, state.acc, state.pot,
                              scalars};
    const size_t lengths[] = {3 * state.n, 3 * state.n, 3 * state.n, state.n,
                              6};
    write_case(name, 5, arrays, lengths);
  }
  tfmm_sim_destroy(s);
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "cpu") && strcmp(argv[2], "gpu"))) {
    fprintf(stderr, "usage: compare_bits_lib OUT_DIR cpu|gpu\n");
    return 2;
  }
  out_dir = argv[1];
  const char *dev = argv[2];
  const char *models[] = {"plummer", "merger"};
  const tfmm_method methods[] = {TFMM_METHOD_FMM, TFMM_METHOD_BH,
                                 TFMM_METHOD_DIRECT};
  const struct {
    const char *name;
    double eps;
    tfmm_softening kernel;
  } softenings[] = {{"newton", 0.0, TFMM_SOFTENING_SPLINE},
                    {"spline", 0.01, TFMM_SOFTENING_SPLINE},
                    {"plummer", 0.01, TFMM_SOFTENING_PLUMMER}};
  for (int m = 0; m < 2; m++) {
    bodies b = make(models[m], 3000, 20261127 + (uint64_t)m);
    for (int k = 0; k < 3; k++)
      for (int e = 0; e < 3; e++) {
        tfmm_config c;
        tfmm_config_defaults(&c);
        c.method = methods[k];
        c.eps = softenings[e].eps;
        c.softening = softenings[e].kernel;
        c.device = strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
        char name[128];
        snprintf(name, sizeof name, "forces_%s_%s_%s_%s", dev, models[m],
                 tfmm_method_name(c.method), softenings[e].name);
        forces(name, &b, &c, NULL);
      }
    tfmm_config c;
    tfmm_config_defaults(&c);
    c.device = strcmp(dev, "gpu") == 0 ? TFMM_DEVICE_GPU : TFMM_DEVICE_CPU;
    c.eps = 0.01;
    /* A tenth of the bodies, every tenth. */
    unsigned char *active = calloc(b.n, 1);
    for (size_t i = 0; i < b.n; i += 10)
      active[i] = 1;
    char name[128];
    snprintf(name, sizeof name, "active_%s_%s_fmm", dev, models[m]);
    forces(name, &b, &c, active);
    free(active);
    c.precision = TFMM_PRECISION_DOUBLE;
    snprintf(name, sizeof name, "forces_%s_%s_fmm_double", dev, models[m]);
    forces(name, &b, &c, NULL);
    c.precision = TFMM_PRECISION_AUTO;
    snprintf(name, sizeof name, "sim_%s_%s_fixed", dev, models[m]);
    sim(name, &b, &c, 0, 8);
    snprintf(name, sizeof name, "sim_%s_%s_eta", dev, models[m]);
    sim(name, &b, &c, 0.025, 4);
    release(&b);
  }
  bodies r = make("plummer", 1000, 7);
  tfmm_config c;
  tfmm_config_defaults(&c);
  c.method = TFMM_METHOD_REFERENCE;
  c.device = TFMM_DEVICE_CPU;
  forces("forces_cpu_plummer_reference_newton", &r, &c, NULL);
  release(&r);
  return failures ? 1 : 0;
}
