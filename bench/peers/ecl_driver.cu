/* Our driver for ECL-BH v4.5 (Burtscher and Pingali's CUDA Barnes-Hut).
 *
 * Built on the GPU machine by run_peers.sh, which makes ecl_kernels.cuh from
 * the peer's ECL-BH_45.cu (unpacked from .devextra/peers.txz, never in this
 * repository): the file up to its main(), with one change, its random number
 * generator drnd() computed in unsigned arithmetic.  The original's
 * `1103515245 * randx` overflows a signed int (undefined behaviour; at -O3 the
 * generator's rejection loop ran forever); the unsigned form gives the bits
 * the two's-complement wrap would.  Its kernels are unchanged.
 *
 * Bodies: the peer's own Plummer generator (SPLASH-2), as its main() draws
 * them: the same calls to drnd() in the same order, velocities drawn and
 * discarded, masses 1/N.
 *
 * Parameters: theta 0.5 (itolsq = 1/theta^2), epssq 1e-24 (eps = 1e-12: zero
 * for every pair of distinct bodies in float; it only keeps the body's own
 * term 0 * finite instead of 0 * inf = NaN, as Ryoanji's h = 1e-12 does).
 * The launch configuration (blocks = number of SMs, THREADSn, FACTORn), the
 * node count and the cache preferences are those of the peer's main().
 *
 * Timed, once per evaluation, with CUDA events on the default stream: the
 * peer's whole force evaluation, as its main() times a step less the
 * integration: BoundingBoxKernel, ClearKernel1, TreeBuildingKernel,
 * ClearKernel2, SummarizationKernel, SortKernel, ForceCalculationKernel.  The
 * positions stay where they are (no IntegrationKernel), so every evaluation
 * rebuilds the same tree from scratch.  One untimed warm-up evaluation, then
 * `reps` timed ones; the median is reported.  Host-device copies and the
 * generator are outside the timed region.
 *
 * usage: ecl_driver N [reps=7] [dump=""]
 *   prints "PEER_RESULT ecl-bh N median_ms min_ms max_ms reps" and, with a
 *   dump path, writes the bodies and the accelerations at 1000 sampled bodies
 *   for ref_accuracy.py.  Exit status 0 on success. */

#include "ecl_kernels.cuh" /* generated: the peer's kernels, see above */

#include <string>
#include <vector>

#include "peers_common.h"

static void check(const char *what) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "ecl_driver: %s: %s\n", what, cudaGetErrorString(e));
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ecl_driver N [reps] [dump]\n");
    return 1;
  }
  const int nbodies = atoi(argv[1]);
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  const char *dump = argc > 3 ? argv[3] : "";
  if (nbodies < 2 || nbodies > (1 << 30) || reps < 1) {
    fprintf(stderr, "ecl_driver: bad N or reps\n");
    return 1;
  }
  const float theta = 0.5f;
  const float itolsq = 1.0f / (theta * theta);
  const float epssq = 1e-24f;
  const float dthf = 0.025f * 0.5f; /* only used by the force kernel's velocity
                                       update, irrelevant here */

  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "ecl_driver: no CUDA device\n");
    return 2;
  }
  const int blocks = prop.multiProcessorCount;
  int nnodes = nbodies * 2;
  if (nnodes < 1024 * blocks)
    nnodes = 1024 * blocks;
  while ((nnodes & (WARPSIZE - 1)) != 0)
    nnodes++;
  nnodes--;

  /* the peer's generator, as its main() calls it */
  std::vector<float4> posMass(nbodies);
  {
    const double rsc = (3 * 3.1415926535897932384626433832795) / 16;
    double r, x, y, z, sq, scale;
    for (int i = 0; i < nbodies; i++) {
      float4 p;
      p.w = 1.0 / nbodies;
      r = 1.0 / sqrt(pow(drnd() * 0.999, -2.0 / 3.0) - 1);
      do {
        x = drnd() * 2.0 - 1.0;
        y = drnd() * 2.0 - 1.0;
        z = drnd() * 2.0 - 1.0;
        sq = x * x + y * y + z * z;
      } while (sq > 1.0);
      scale = rsc * r / sqrt(sq);
      p.x = x * scale;
      p.y = y * scale;
      p.z = z * scale;
      posMass[i] = p;
      /* velocity: drawn (the sequence of positions depends on it), not used */
      do {
        x = drnd();
        y = drnd() * 0.1;
      } while (y > x * x * pow(1 - x * x, 3.5));
      do {
        x = drnd() * 2.0 - 1.0;
        y = drnd() * 2.0 - 1.0;
        z = drnd() * 2.0 - 1.0;
        sq = x * x + y * y + z * z;
      } while (sq > 1.0);
    }
  }

  int *childl, *countl, *startl, *sortl;
  float4 *posMassl, *accVell;
  float2 *vell;
  float3 *maxl, *minl;
  if (cudaMalloc(&childl, sizeof(int) * (nnodes + 1) * 8) != cudaSuccess ||
      cudaMalloc(&vell, sizeof(float2) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&accVell, sizeof(float4) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&countl, sizeof(int) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&startl, sizeof(int) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&sortl, sizeof(int) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&posMassl, sizeof(float4) * (nnodes + 1)) != cudaSuccess ||
      cudaMalloc(&maxl, sizeof(float3) * blocks * FACTOR1) != cudaSuccess ||
      cudaMalloc(&minl, sizeof(float3) * blocks * FACTOR1) != cudaSuccess) {
    fprintf(stderr, "ecl_driver: out of device memory\n");
    return 2;
  }
  cudaMemset(vell, 0, sizeof(float2) * (nnodes + 1));
  cudaMemset(accVell, 0, sizeof(float4) * (nnodes + 1));
  cudaMemcpy(posMassl, posMass.data(), sizeof(float4) * nbodies,
             cudaMemcpyHostToDevice);
  check("upload");

  cudaFuncSetCacheConfig(BoundingBoxKernel, cudaFuncCachePreferShared);
  cudaFuncSetCacheConfig(TreeBuildingKernel, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(ClearKernel1, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(ClearKernel2, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(SummarizationKernel, cudaFuncCachePreferShared);
  cudaFuncSetCacheConfig(SortKernel, cudaFuncCachePreferL1);
  cudaFuncSetCacheConfig(ForceCalculationKernel, cudaFuncCachePreferEqual);

  InitializationKernel<<<1, 1>>>();
  check("InitializationKernel");

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> ms;
  for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up, untimed */
    cudaEventRecord(start, 0);
    /* ---- timed: the whole evaluation ---- */
    BoundingBoxKernel<<<blocks * FACTOR1, THREADS1>>>(
        nnodes, nbodies, startl, childl, posMassl, maxl, minl);
    ClearKernel1<<<blocks * 1, 1024>>>(nnodes, nbodies, childl);
    TreeBuildingKernel<<<blocks * FACTOR2, THREADS2>>>(nnodes, nbodies, childl,
                                                       posMassl);
    ClearKernel2<<<blocks * 1, 1024>>>(nnodes, startl, posMassl);
    SummarizationKernel<<<blocks * FACTOR3, THREADS3>>>(nnodes, nbodies, countl,
                                                        childl, posMassl);
    SortKernel<<<blocks * FACTOR4, THREADS4>>>(nnodes, nbodies, sortl, countl,
                                               startl, childl);
    ForceCalculationKernel<<<blocks * FACTOR5, THREADS5>>>(
        nnodes, nbodies, dthf, itolsq, epssq, sortl, childl, posMassl, vell,
        accVell);
    /* ---- end of the timed region ---- */
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    check("evaluation");
    float t;
    cudaEventElapsedTime(&t, start, stop);
    if (rep >= 0)
      ms.push_back(t);
  }
  peers::print_result("ecl-bh", nbodies, ms);

  if (dump[0]) {
    std::vector<float4> acc(nbodies);
    cudaMemcpy(acc.data(), accVell, sizeof(float4) * nbodies,
               cudaMemcpyDeviceToHost);
    check("download");
    std::vector<float> x(nbodies), y(nbodies), z(nbodies), m(nbodies),
        ax(nbodies), ay(nbodies), az(nbodies);
    for (int i = 0; i < nbodies; i++) {
      x[i] = posMass[i].x;
      y[i] = posMass[i].y;
      z[i] = posMass[i].z;
      m[i] = posMass[i].w;
      ax[i] = acc[i].x;
      ay[i] = acc[i].y;
      az[i] = acc[i].z;
    }
    if (peers::write_dump(dump, nbodies, x.data(), y.data(), z.data(), m.data(),
                          peers::sample_indices(nbodies, 1000, 1), ax.data(),
                          ay.data(), az.data()) != 0)
      return 3;
  }
  return 0;
}
