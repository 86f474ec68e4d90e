#!/usr/bin/env python3
"""Accuracy of a peer's accelerations at its sampled bodies.

Reads a dump written by ecl_driver / ryoanji_driver (layout in
peers_common.h), computes the float64 direct sum at the k sampled targets
over all n sources (the target itself excluded, eps 0, G 1):
    a_ref(i) = sum_{j != i} m_j (x_j - x_i) / |x_j - x_i|^3
with CuPy on the GPU (a raw kernel, one block a target), or with NumPy
when CuPy is missing or --numpy is given (slow: small n only), and prints

    PEER_ACC p50 p99 max k

of e = |a - a_ref| / |a_ref| over the targets.
"""
import argparse
import sys

import numpy as np

KERNEL = r"""
extern "C" __global__ void direct_fp64(const double* __restrict__ x, const double* __restrict__ y,
                                       const double* __restrict__ z, const double* __restrict__ m,
                                       long long n, const long long* __restrict__ idx,
                                       double* __restrict__ out)
{
  const long long t = idx[blockIdx.x];
  const double xi = x[t], yi = y[t], zi = z[t];
  double ax = 0.0, ay = 0.0, az = 0.0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    const double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
    const double r2 = dx * dx + dy * dy + dz * dz;
    if (j == t || r2 == 0.0) continue;
    const double inv = 1.0 / sqrt(r2);
    const double s = m[j] * inv * inv * inv;
    ax += s * dx; ay += s * dy; az += s * dz;
  }
  __shared__ double sx[256], sy[256], sz[256];
  sx[threadIdx.x] = ax; sy[threadIdx.x] = ay; sz[threadIdx.x] = az;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      sx[threadIdx.x] += sx[threadIdx.x + w];
      sy[threadIdx.x] += sy[threadIdx.x + w];
      sz[threadIdx.x] += sz[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = sx[0]; out[3 * blockIdx.x + 1] = sy[0]; out[3 * blockIdx.x + 2] = sz[0];
  }
}
"""


def read_dump(path):
    with open(path, "rb") as f:
        n, k = (int(v) for v in np.fromfile(f, dtype="<i8", count=2))
        src = np.fromfile(f, dtype="<f4", count=4 * n).reshape(4, n)
        idx = np.fromfile(f, dtype="<i8", count=k)
        acc = np.fromfile(f, dtype="<f4", count=3 * k).reshape(3, k)
    if src.shape[1] != n or idx.size != k or acc.shape[1] != k:
        raise SystemExit(f"{path}: truncated dump")
    return n, k, src, idx, acc


def reference_cupy(src, idx):
    import cupy as cp

    kern = cp.RawKernel(KERNEL, "direct_fp64")
    x, y, z, m = (cp.asarray(src[c], dtype=cp.float64) for c in range(4))
    d_idx = cp.asarray(idx, dtype=cp.int64)
    out = cp.zeros(3 * idx.size, dtype=cp.float64)
    kern((idx.size,), (256,), (x, y, z, m, np.int64(src.shape[1]), d_idx, out))
    return cp.asnumpy(out).reshape(idx.size, 3).T


def reference_numpy(src, idx):
    s = src.astype(np.float64)
    out = np.zeros((3, idx.size))
    for c, t in enumerate(idx):
        d = s[:3] - s[:3, t : t + 1]
        r2 = (d * d).sum(axis=0)
        r2[t] = np.inf
        r2[r2 == 0.0] = np.inf
        w = s[3] / (r2 * np.sqrt(r2))
        out[:, c] = (d * w).sum(axis=1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--numpy", action="store_true", help="NumPy reference (no CuPy)")
    a = ap.parse_args()
    n, k, src, idx, acc = read_dump(a.dump)
    ref = None
    if not a.numpy:
        try:
            ref = reference_cupy(src, idx)
        except ImportError:
            print("ref_accuracy: no CuPy, NumPy reference", file=sys.stderr)
    if ref is None:
        ref = reference_numpy(src, idx)
    err = np.linalg.norm(acc.astype(np.float64) - ref, axis=0) / np.linalg.norm(ref, axis=0)
    if not np.all(np.isfinite(err)):
        print(f"ref_accuracy: {np.count_nonzero(~np.isfinite(err))} non-finite errors", file=sys.stderr)
        err = np.where(np.isfinite(err), err, np.inf)
    p50, p99 = np.percentile(err, [50, 99])
    print(f"PEER_ACC {p50:.3e} {p99:.3e} {err.max():.3e} {k}")


if __name__ == "__main__":
    main()
