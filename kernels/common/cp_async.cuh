/* Asynchronous 16-byte copies from global to shared memory (cp.async,
 * sm_80+): tile loads skip registers and overlap the previous tile's sums.
 * Used by the all-pairs kernel; the near-field kernel loads through
 * registers instead, since it moves each source into the target's frame. */
#ifndef TFMM_CP_ASYNC_CUH
#define TFMM_CP_ASYNC_CUH

__device__ __forceinline__ void copy16_async(float4 *dst, const float4 *src) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src)
               : "memory");
}
__device__ __forceinline__ void copy_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int PENDING> __device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

#endif
