/* Our driver for Ryoanji (Keller, Yokota et al.; the GPU Barnes-Hut/multipole
 * code of SPH-EXA, on the cornerstone octree), after the peer's own
 * ryoanji/test/demo.cu: the same calls, in the same order, with a bounding
 * box computed on the GPU instead of the demo's fixed box, Plummer bodies
 * instead of its cube, the Cartesian quadrupole that SPH-EXA's gravity uses
 * instead of the demo's spherical P = 4, and timing around the whole
 * evaluation.  Built on the GPU machine by run_peers.sh against the peer's
 * headers and sources unpacked from .devextra/peers.txz (never in this
 * repository); nothing of the peer is changed.
 *
 * Bodies: the peer's own Plummer generator, cstone's
 * test/coord_samples/plummer.hpp (srand48(42), radii < 100, centre of mass
 * at 0), masses 1/N, smoothing h = 1e-12 for every body (Ryoanji's P2P uses
 * max(r^2, (h_i + h_j)^2): zero for distinct bodies in float, and it keeps a
 * body's own term finite).
 *
 * Parameters: theta 0.5 (upsweep's MAC), ncrit (bucket size) 64 (the
 * TreeBuilder's default), target groups of 64 bodies (TravConfig::targetSize),
 * 64-bit Hilbert keys (cstone's default), G = 1, no periodic shells.
 *
 * Timed, once per evaluation, wall clock between two cudaDeviceSynchronize()
 * (Ryoanji's functions synchronise with the host themselves): the whole
 * evaluation, in this order
 *   bounding box  cstone::MinMaxGpu on x, y and z (three thrust reductions)
 *   tree          a new TreeBuilder<uint64_t>(64): update() (SFC keys, sort
 *                 and reordering of x,y,z, cstone octree from a root-only
 *                 start to convergence, internal tree) and extract() (layout,
 *                 level ranges to the host)
 *   upsweep       the centres, MAC radii and quadrupoles of all cells
 *                 (ryoanji::upsweep), their buffers allocated here
 *   traverse      zeroing ax, ay, az, then ryoanji::computeAcceleration (its
 *                 groups, its work pool, the traversal kernel, its counters)
 * One untimed warm-up evaluation, then `reps` timed ones; the median is
 * reported.  With PEER_RYOANJI_REUSE_TREE=1 the TreeBuilder is kept between
 * evaluations (a simulation's steady state: the previous tree is the start),
 * which is NOT the default.
 *
 * update() sorts x, y, z into SFC order but not m or h; both are constant
 * here, so the bodies stay consistent.  The accelerations are those of the
 * sorted bodies, and the dump holds the sorted x, y, z.
 *
 * usage: ryoanji_driver N [reps=7] [dump=""]
 *   prints "PEER_RESULT ryoanji N median_ms min_ms max_ms reps" and, with a
 *   dump path, writes the bodies and the accelerations at 1000 sampled bodies
 *   for ref_accuracy.py. */

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <thrust/device_vector.h>
#include <thrust/fill.h>
#include <thrust/host_vector.h>

#include "cstone/cuda/cuda_utils.cuh"
#include "cstone/cuda/thrust_util.cuh"
#include "cstone/primitives/primitives_gpu.h"
#include "cstone/sfc/box.hpp"

#include "ryoanji/interface/treebuilder.cuh"
#include "ryoanji/nbody/cartesian_qpole.hpp"
#include "ryoanji/nbody/traversal.cuh"
#include "ryoanji/nbody/types.h"
#include "ryoanji/nbody/upwardpass.cuh"

#include "coord_samples/plummer.hpp"

#include "peers_common.h"

using namespace ryoanji;

static void check(const char *what) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaGetLastError();
  if (e != cudaSuccess) {
    fprintf(stderr, "ryoanji_driver: %s: %s\n", what, cudaGetErrorString(e));
    exit(2);
  }
}

int main(int argc, char **argv) {
  using T = float;
  using MultipoleType = CartesianQuadrupole<T>;
  using KeyType = uint64_t;

  if (argc < 2) {
    fprintf(stderr, "usage: ryoanji_driver N [reps] [dump]\n");
    return 1;
  }
  const size_t numBodies = std::strtoull(argv[1], nullptr, 10);
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  const char *dump = argc > 3 ? argv[3] : "";
  const char *reuse_env = getenv("PEER_RYOANJI_REUSE_TREE");
  const bool reuseTree = reuse_env && reuse_env[0] == '1';
  if (numBodies < 2 || reps < 1) {
    fprintf(stderr, "ryoanji_driver: bad N or reps\n");
    return 1;
  }
  const T theta = 0.5;
  const T G = 1.0;
  const unsigned ncrit = 64;
  const int numShells = 0;

  /* the peer's generator */
  auto pos = plummer<T>(numBodies);
  thrust::device_vector<T> d_x = pos[0], d_y = pos[1], d_z = pos[2];
  thrust::device_vector<T> d_m(numBodies, T(1) / T(numBodies));
  thrust::device_vector<T> d_h(numBodies, T(1e-12));
  thrust::device_vector<T> d_ax(numBodies), d_ay(numBodies), d_az(numBodies);
  check("upload");

  std::unique_ptr<TreeBuilder<KeyType>> kept;
  cstone::MinMaxGpu<T> minMax;
  std::vector<double> ms;
  for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up, untimed */
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    /* ---- timed: the whole evaluation ---- */
    /* bounding box */
    auto [xmin, xmax] = minMax(rawPtr(d_x), rawPtr(d_x) + numBodies);
    auto [ymin, ymax] = minMax(rawPtr(d_y), rawPtr(d_y) + numBodies);
    auto [zmin, zmax] = minMax(rawPtr(d_z), rawPtr(d_z) + numBodies);
    cstone::Box<T> box(xmin, xmax, ymin, ymax, zmin, zmax);
    /* tree */
    std::unique_ptr<TreeBuilder<KeyType>> fresh;
    if (!reuseTree || !kept)
      fresh.reset(new TreeBuilder<KeyType>(ncrit));
    TreeBuilder<KeyType> &treeBuilder =
        reuseTree ? (kept ? *kept : *fresh) : *fresh;
    int numSources = treeBuilder.update(rawPtr(d_x), rawPtr(d_y), rawPtr(d_z),
                                        numBodies, box);
    std::vector<int2> levelRange(treeBuilder.maxTreeLevel() + 1);
    int highestLevel = treeBuilder.extract(levelRange.data());
    /* upsweep */
    thrust::device_vector<Vec4<T>> sourceCenter(numSources);
    thrust::device_vector<MultipoleType> multipoles(numSources);
    upsweep(numSources, treeBuilder.numLeafNodes(), highestLevel, theta,
            levelRange.data(), rawPtr(d_x), rawPtr(d_y), rawPtr(d_z),
            rawPtr(d_m), rawPtr(d_h), treeBuilder.layout(),
            treeBuilder.childOffsets(), treeBuilder.leafToInternal(),
            rawPtr(sourceCenter), rawPtr(multipoles));
    /* traverse */
    thrust::fill(d_ax.begin(), d_ax.end(), T(0));
    thrust::fill(d_ay.begin(), d_ay.end(), T(0));
    thrust::fill(d_az.begin(), d_az.end(), T(0));
    auto interactions = computeAcceleration(
        0, numBodies, rawPtr(d_x), rawPtr(d_y), rawPtr(d_z), rawPtr(d_m),
        rawPtr(d_h), G, numShells, box, (T *)nullptr, rawPtr(d_ax),
        rawPtr(d_ay), rawPtr(d_az), treeBuilder.childOffsets(),
        treeBuilder.internalToLeaf(), treeBuilder.layout(),
        rawPtr(sourceCenter), rawPtr(multipoles));
    cudaDeviceSynchronize();
    /* ---- end of the timed region ---- */
    auto t1 = std::chrono::steady_clock::now();
    if (reuseTree && fresh)
      kept = std::move(fresh);
    check("evaluation");
    if (rep >= 0)
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (rep == reps - 1)
      printf("ryoanji: %d cells, depth %d, P2P %.0f (max %.0f), M2P %.0f (max "
             "%.0f) a body\n",
             numSources, highestLevel, double(interactions[0]),
             double(interactions[1]), double(interactions[2]),
             double(interactions[3]));
  }
  peers::print_result("ryoanji", numBodies, ms);

  if (dump[0]) {
    thrust::host_vector<T> x = d_x, y = d_y, z = d_z, m = d_m, ax = d_ax,
                           ay = d_ay, az = d_az;
    check("download");
    if (peers::write_dump(dump, numBodies, x.data(), y.data(), z.data(),
                          m.data(), peers::sample_indices(numBodies, 1000, 1),
                          ax.data(), ay.data(), az.data()) != 0)
      return 3;
  }
  return 0;
}
