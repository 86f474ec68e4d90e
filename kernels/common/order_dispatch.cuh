/* The run-time order p as a compile-time one: the fast far-field kernels
 * take the order as a template argument (their loops unroll, their arrays
 * stay in registers), and each entry point maps p onto an instantiation.
 * tfmm_order_dispatch<MAX>(p, f) calls f(std::integral_constant<int, P>{})
 * with P = p for 0 <= p < MAX and P = MAX otherwise (the caller has
 * checked the range), and returns what f returns. */
#ifndef TFMM_ORDER_DISPATCH_CUH
#define TFMM_ORDER_DISPATCH_CUH

#include <type_traits>

template <int MAX, int P = 0, class F> auto tfmm_order_dispatch(int p, F &&f) {
  if constexpr (P >= MAX)
    return f(std::integral_constant<int, MAX>{});
  else
    return p == P ? f(std::integral_constant<int, P>{})
                  : tfmm_order_dispatch<MAX, P + 1>(p, f);
}

#endif
