/* The analytic two-body orbit the simulation tests compare against. */
#ifndef TFMM_TEST_KEPLER_H
#define TFMM_TEST_KEPLER_H

/* The relative orbit r = x_1 - x_0 of semi-major axis a = 1, eccentricity
 * e, total mass M = 1 (G = 1: mean motion 1, period 2 pi), pericentre on
 * +x at t = 0, at time t: E - e sin E = t solved by Newton's method, then
 * r = (cos E - e, sqrt(1 - e^2) sin E), v = dr/dt. */
void kepler_relative(double e, double t, double r[3], double v[3]);

/* Bodies of masses m0 and 1 - m0 about their centre of mass at rest. */
void kepler_bodies(double e, double m0, double t, double pos[6], double vel[6]);

#endif
