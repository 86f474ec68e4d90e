/* What an evaluation over several ranks did (see dist_report.h). */
#include "dist_report.h"

#include "mpi_cli.h"
#include "solver_cli.h"

/* The counts of every rank's tfmm_dist_stats, in this order. */
enum { OWNED, GHOSTS, LET_CELLS, SENT_BODIES, SENT_CELLS, NCOUNTS };

/* The smallest and largest of each count over the ranks. */
static void count_range(const tfmm_dist_stats *d, double lo[NCOUNTS],
                        double hi[NCOUNTS]) {
  const size_t v[NCOUNTS] = {d->owned, d->ghosts, d->let_cells, d->sent_bodies,
                             d->sent_cells};
  for (int k = 0; k < NCOUNTS; k++)
    lo[k] = hi[k] = (double)v[k];
  mpi_cli_min_f64(lo, NCOUNTS);
  mpi_cli_max_f64(hi, NCOUNTS);
}

void dist_report_print(FILE *fp, const tfmm_solver *solver) {
  if (!mpi_cli_on())
    return;
  const tfmm_dist_stats *d = tfmm_solver_dist_stats(solver);
  double lo[NCOUNTS], hi[NCOUNTS];
  count_range(d, lo, hi);
  double t[6] = {d->time_decompose, d->time_exchange, d->time_let,
                 d->time_local,     d->time_remote,   d->time_total};
  mpi_cli_max_f64(t, 6);
  fprintf(fp,
          "  ranks: %d (MPI), imbalance %.3f (the slowest rank's local time "
          "over the mean)\n"
          "  per rank, smallest to largest: bodies owned %.0f to %.0f, "
          "received %.0f to %.0f, sent %.0f to %.0f; multipoles received "
          "%.0f to %.0f, sent %.0f to %.0f\n",
          mpi_cli_ranks(), d->imbalance, lo[OWNED], hi[OWNED], lo[GHOSTS],
          hi[GHOSTS], lo[SENT_BODIES], hi[SENT_BODIES], lo[LET_CELLS],
          hi[LET_CELLS], lo[SENT_CELLS], hi[SENT_CELLS]);
  fprintf(fp, "  the slowest rank's time in each part (rank 0's phases are "
              "above):\n");
  const char *names[6] = {"decompose", "exchange", "let",
                          "local",     "remote",   "ranks total"};
  for (int k = 0; k < 6; k++)
    solver_cli_print_time(fp, names[k], t[k]);
}

const char *dist_report_line(const tfmm_solver *solver, char *buf,
                             size_t size) {
  buf[0] = '\0';
  if (!mpi_cli_on())
    return buf;
  const tfmm_dist_stats *d = tfmm_solver_dist_stats(solver);
  double lo[NCOUNTS], hi[NCOUNTS];
  count_range(d, lo, hi);
  snprintf(buf, size,
           "%d (MPI); the last evaluation: bodies owned %.0f to %.0f per "
           "rank, received %.0f to %.0f, multipoles received %.0f to %.0f, "
           "imbalance %.3f",
           mpi_cli_ranks(), lo[OWNED], hi[OWNED], lo[GHOSTS], hi[GHOSTS],
           lo[LET_CELLS], hi[LET_CELLS], d->imbalance);
  return buf;
}
