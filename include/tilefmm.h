/* tilefmm: gravitational N-body forces on the CPU and the GPU.
 *
 * This is the one public header. Every exported name starts with tfmm_.
 * Units are the caller's: tilefmm never assumes any, except that the
 * initial-condition generators work in N-body units (G = M = 1, E = -1/4).
 *
 * Physics (for every method):
 *   a_i   =  G sum_{j != i} m_j r_ij g(|r_ij|),   g(r) = -phi'(r) / r
 *   phi_i =  G sum_{j != i} m_j phi(|r_ij|)
 * with r_ij = x_j - x_i and phi(r) the softened potential of a unit mass,
 * chosen by tfmm_config.softening (tfmm_softening below):
 *   plummer: phi(r) = -1 / (r^2 + eps^2)^(1/2) (GPU Gems 3, chapter 31);
 *   spline:  GADGET-2's cubic spline kernel (Springel 2005, MNRAS 364,
 *            1105, eq. 4) of support h = 2.8 eps, so that phi(0) = -1/eps as
 *            for Plummer; exactly Newtonian, phi = -1/r, for r >= h.
 * The self term is excluded from both sums. With eps = 0 both are Newton's
 * law and two distinct bodies at one point are an error naming both.
 * Every method computes the softened force: the tree methods' far field
 * either is exactly Newtonian (spline, cells that cannot come within h of
 * each other) or is kept out of the softening's reach to within the
 * accuracy asked for (plummer; see tfmm_config.accuracy).
 *
 * Errors are values: every call that can fail returns a tfmm_status, and a
 * solver keeps a message describing the last failure (tfmm_solver_message).
 * The library never prints, never exits and keeps no global mutable state.
 */
#ifndef TILEFMM_H
#define TILEFMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: only what this header
 * declares is exported. */
#if defined(__GNUC__)
#define TFMM_API __attribute__((visibility("default")))
#else
#define TFMM_API
#endif

#define TFMM_VERSION_MAJOR 0
#define TFMM_VERSION_MINOR 1
#define TFMM_VERSION_PATCH 0

/* Status codes. TFMM_OK is zero; every failure is positive. */
typedef enum tfmm_status {
  TFMM_OK = 0,
  TFMM_ERR_INVALID_ARGUMENT =
      1,                    /* a parameter or input value is out of range */
  TFMM_ERR_NO_MEMORY = 2,   /* host or device allocation failed */
  TFMM_ERR_NO_DEVICE = 3,   /* a GPU was required but none is usable */
  TFMM_ERR_CUDA = 4,        /* a CUDA runtime call or kernel failed */
  TFMM_ERR_COINCIDENT = 5,  /* two distinct bodies at one point, eps = 0 */
  TFMM_ERR_NONFINITE = 6,   /* a computed value is NaN or infinite, or
                               would leave double's range (above, or below:
                               forces that would come out as 0) */
  TFMM_ERR_UNSUPPORTED = 7, /* this build lacks the backend asked for */
  TFMM_ERR_MPI = 8,         /* an MPI call failed (several processes) */
  TFMM_ERR_FILE = 9,     /* a file cannot be read or written, or is damaged or
                           not in its format (tfmm_snapshot_read, ...) */
  TFMM_ERR_ACCURACY = 10 /* tfmm_config.verify: the evaluation's measured
                            error misses tfmm_config.accuracy */
} tfmm_status;

/* Force methods. */
typedef enum tfmm_method {
  /* CPU, OpenMP, double precision with compensated (Neumaier) summation:
   * O(N^2), the truth every accuracy test and validator compares against. */
  TFMM_METHOD_REFERENCE = 0,
  /* All pairs in tfmm_config.precision (single by default): the tiled
   * CUDA kernel of GPU Gems 3 chapter 31 on the GPU, a vectorised OpenMP
   * loop on the CPU. O(N^2). */
  TFMM_METHOD_DIRECT = 1,
  /* Fast multipole method: octree, dual-tree traversal with the opening
   * criterion r_A + r_B < theta d, multipole and local expansions of order
   * p in double precision (far field), P2P over the leaf neighbour lists
   * in tfmm_config.precision (near field). The far field runs on the CPU
   * (OpenMP); the near field runs on the GPU when the device is one, at the
   * same time as the far field, else on the CPU after it. The default. */
  TFMM_METHOD_FMM = 2,
  /* Barnes-Hut: the same octree and near field; each leaf evaluates the
   * multipoles of the cells it accepts directly at its bodies (M2P). */
  TFMM_METHOD_BH = 3
} tfmm_method;

/* Where the work runs. */
typedef enum tfmm_device {
  TFMM_DEVICE_AUTO = 0, /* the GPU when one is usable, else the CPU */
  TFMM_DEVICE_CPU = 1,
  TFMM_DEVICE_GPU = 2 /* an error (TFMM_ERR_NO_DEVICE) when there is none */
} tfmm_device;

/* How a tree method's evaluation is laid out on the machine. */
typedef enum tfmm_schedule_kind {
  /* gpu when the solver has a GPU, N >= TFMM_TREE_GPU_MIN_BODIES and
   * neither tree_device nor far_device is cpu; else hybrid. The default. */
  TFMM_SCHEDULE_AUTO = 0,
  /* Every stage on the solver's GPU, on one stream: the tree, the
   * multipoles, the traversal (the lists), the near field and the far
   * field; the bodies go up once and the forces come back once (not at
   * all with tfmm_solver_compute_device). An error (TFMM_ERR_NO_DEVICE)
   * without a GPU. */
  TFMM_SCHEDULE_GPU = 1,
  /* The seed's design: the lists on the CPU, the near field on the GPU
   * (or the CPU) beside the far field; the tree and the far field where
   * tree_device and far_device say. */
  TFMM_SCHEDULE_HYBRID = 2
} tfmm_schedule_kind;

/* The softened potential of a body (see the physics above). */
typedef enum tfmm_softening {
  /* phi = -1 / (r^2 + eps^2)^(1/2): the chapter's. It differs from Newton's
   * law at every distance (by 3 eps^2 / (2 r^2) in the force), so the tree
   * methods keep a cell pair out of the expansions while that difference
   * could exceed their accuracy target. */
  TFMM_SOFTENING_PLUMMER = 0,
  /* GADGET-2's cubic spline (Springel 2005 eq. 4), support h = 2.8 eps for
   * the Plummer-equivalent eps: Newtonian beyond h, so the expansions are
   * exact for cells that cannot come within h of each other. */
  TFMM_SOFTENING_SPLINE = 1
} tfmm_softening;

/* The kernel the far field's expansions carry under Plummer softening
 * (tfmm_config.far_kernel; issue 28, docs/accuracy.md "Plummer softening
 * and the order"). */
typedef enum tfmm_far_kernel {
  /* newton where the hybrid schedule runs the far field or the tree on
   * the GPU, without Plummer softening, with eps 0,
   * under the error or mass criterion, for bh and where the planner does
   * not choose theta and order (measure off, or theta and order both
   * given); else softened for accuracy targets >= TFMM_SOFT_AUTO_MIN_TOL
   * on at least TFMM_SOFT_AUTO_MIN_BODIES bodies with eps at least
   * TFMM_SOFT_AUTO_MIN_EPS of their size, where the softened far field
   * measured cheaper, newton otherwise. tfmm_plan_resolve, without the
   * bodies, takes their size from box_size, else as 1. The default. */
  TFMM_FAR_KERNEL_AUTO = 0,
  /* Newton's 1/r in solid harmonics, with the softening's separation:
   * cell pairs that come closer than the distance where Plummer's force is
   * within the target of Newton's are opened (tfmm_stats
   * .softening_separation). Near pairs grow with eps. */
  TFMM_FAR_KERNEL_NEWTON = 1,
  /* The Plummer-softened kernel in Cartesian Taylor expansions (to order
   * 12; the force an order lower than the expansion's, as for newton's
   * local expansions), no separation: the error falls with the order at
   * any eps. Needs Plummer softening with eps > 0, and on the GPU the gpu
   * schedule (the hybrid schedule's GPU far field is Newton's: there
   * tree_device and far_device cpu or auto); not with the error
   * criterion. */
  TFMM_FAR_KERNEL_SOFTENED = 2
} tfmm_far_kernel;

/* tfmm_config.far_kernel auto: the least target, bodies and eps relative
 * to the bodies' size (eps over the side of their bounding cube rounded up
 * to a power of two; box_size's when given) for which it takes the
 * softened kernel. Measured with both kernels measured by the planner, one
 * CPU thread (docs/accuracy.md, "The softened far field in the solver"):
 * at 200,000 bodies and the target 1e-3 the softened far field was
 * 1.3-1.9x cheaper where eps was 1.6e-4 to 2.5e-3 of the cube (Plummer
 * sphere and clusters) and 3.5x dearer at 1.6e-5; at 50,000 bodies
 * Newton's was cheaper in 5 of 6 cases. The gpu schedule takes the same
 * rule: at 1M bodies on an H200 it chose the faster kernel in 6 of 6
 * held-out cases, softened 1.3-8.5x faster at eps 1e-2, newton 5-14x
 * faster at eps 1e-3 but on clusters (bench/results/soft_far_gpu). */
#define TFMM_SOFT_AUTO_MIN_TOL 1e-3
#define TFMM_SOFT_AUTO_MIN_BODIES 200000
#define TFMM_SOFT_AUTO_MIN_EPS 1e-4

/* Floating-point precision of the pairwise sums (near field, direct). */
typedef enum tfmm_precision {
  TFMM_PRECISION_SINGLE = 0, /* FP32 interactions: the near field's error
                                floor is about 1e-7 to 1e-6 for smooth
                                systems, and up to 2e-4 where large pulls
                                cancel (a dense line of bodies, eps = 0) */
  TFMM_PRECISION_DOUBLE = 1, /* FP64 interactions: accuracy targets to 1e-8;
                                about a third of the FP32 rate on an H100,
                                far less on consumer GPUs */
  /* The tree methods: single for accuracy targets >= 3e-4, double below,
   * so that the target holds whatever the input; the direct method:
   * single. The default. Single (asked or chosen) runs in double where it
   * cannot hold the input's range (eps below 2^-20 of the span for direct,
   * 2^-32 for the tree methods, or above 2^32; sums that come out
   * non-finite or bodies that meet once rounded to float), and the stats'
   * plan says so. Double differences the coordinates themselves, so a
   * small group far from the others keeps its separations. */
  TFMM_PRECISION_AUTO = 2
} tfmm_precision;

/* Opening criterion (multipole acceptance criterion) of the tree methods. */
typedef enum tfmm_mac_kind {
  /* r_A + r_B < theta d: Dehnen 2002 eq. 13 with one theta for all cells. */
  TFMM_MAC_GEOMETRIC = 0,
  /* The same with theta depending on the heavier cell's mass M: theta(M)
   * solves theta^(p+2) / (1 - theta)^2 = theta0^(p+2) / (1 - theta0)^2 *
   * (M / M_total)^(-1/3) (Dehnen 2002 eq. 13, there for p = 3), theta0 =
   * tfmm_config.theta being the root's: light cells open less, heavy ones
   * as the geometric criterion, balancing each pair's error bound. */
  TFMM_MAC_MASS = 1,
  /* Error-based (Dehnen 2014, SWIFT's adaptive criterion): B acts on A
   * through its expansion when the error it may bring,
   * M_B (r_A + r_B)^p / d^(p+2) (plus 3 M_B eps^2 / (2 (d - r_A - r_B)^4)
   * with Plummer softening), is below tfmm_config.mac_epsilon times the
   * least acceleration of A's bodies, and r_A + r_B < theta d (theta a
   * cap). Each body's error is held relative to its own force. That
   * least acceleration is estimated by a monopole walk before the
   * traversal; in a simulation (tfmm_sim) it is instead the least |a| of
   * A's bodies at their previous force evaluation (the state's
   * accelerations: an inactive body's last ones under individual steps),
   * as SWIFT takes it from the previous step: the forces themselves
   * rather than an estimate at the leaf's centre, at no cost, and a
   * restart keeps the bits since the state holds them. The first
   * evaluation of a simulation, a simulation over several processes and
   * every tfmm_solver_compute call use the estimate. */
  TFMM_MAC_ERROR = 2
} tfmm_mac_kind;

/* The most OpenMP threads tfmm_config.num_threads may ask for (libgomp
 * fails inside, with no error to report, on teams of 10^5). */
#define TFMM_MAX_THREADS 1024

/* The highest expansion order tfmm_config.order may ask for, and the
 * deepest tree level tfmm_config.max_depth may (the resolution of the
 * 63-bit keys). */
#define TFMM_MAX_ORDER 20
#define TFMM_MAX_TREE_DEPTH 21

/* tfmm_config.theta and .order: chosen from tfmm_config.accuracy. */
#define TFMM_FROM_ACCURACY (-1)

/* When an evaluation of a tree method measures its own error
 * (tfmm_config.measure): the exact forces (double-precision sums, the same
 * softening) at a sample of the bodies, compared with the evaluation's;
 * what it found is in tfmm_stats.error. */
typedef enum tfmm_measure {
  /* When the settings are chosen from the accuracy target (theta or order
   * TFMM_FROM_ACCURACY): the evaluations that choose them (the first, and
   * one in TFMM_RECHECK_EVERY after), each measured; else never. */
  TFMM_MEASURE_AUTO = 0,
  TFMM_MEASURE_ALWAYS = 1, /* every evaluation */
  /* never: theta and order then come from the calibration table alone,
   * as before measured choice (docs/accuracy.md) */
  TFMM_MEASURE_OFF = 2
} tfmm_measure;

/* TFMM_MEASURE_AUTO: a kept solver re-measures the setting it chose once
 * in this many evaluations (and chooses again when it misses or is far
 * more accurate than asked). */
#define TFMM_RECHECK_EVERY 16

/* Over two or more MPI ranks (tfmm_solver_create_mpi) the planner aims at
 * the accuracy target divided by this: the ranks' split follows their
 * measured times, so a setting kept from one measurement is evaluated
 * over another split, and its 99th percentile moves with it (up to 1.68
 * times on 4 ranks in tests/mpi/test_mpi_planner.c). With the margin the
 * calls that keep a setting unmeasured meet the target too; verify judges
 * the target itself. One rank has no margin. */
#define TFMM_SPLIT_MARGIN 2.0

/* Solver configuration: fill with tfmm_config_defaults, then change fields. */
typedef struct tfmm_config {
  double G;   /* gravitational constant; default 1 (N-body units) */
  double eps; /* softening length, >= 0, in length units (for the
                 spline, the Plummer-equivalent length: the
                 kernel's support is 2.8 eps); default 0 */
  tfmm_softening softening; /* default TFMM_SOFTENING_PLUMMER */
  tfmm_precision precision; /* of the pairwise sums; default
                               TFMM_PRECISION_AUTO */
  tfmm_method method;       /* default TFMM_METHOD_FMM */
  tfmm_device device;       /* default TFMM_DEVICE_AUTO */
  /* Tree methods (fmm, bh). */
  double accuracy;    /* the target: the 99th percentile over bodies of the
                         relative acceleration error |a - a_true| / |a_true|,
                         in (0, 0.1]; theta and order left at
                         TFMM_FROM_ACCURACY are chosen to meet it at the least
                         cost from a calibration (docs/accuracy.md), and with
                         plummer softening it bounds the softening's effect on
                         the far field. With precision auto, targets
                         below 3e-4 run the near field in double. Default
                         1e-3 */
  double theta;       /* opening angle in [0, 1]: cells A and B interact
                         through expansions when r_A + r_B < theta d;
                         0 accepts no pair, so that every pair is near (all
                         pairs through the leaf lists: for validation);
                         TFMM_FROM_ACCURACY (the default): chosen */
  int order;          /* expansion order p: degrees 0..p kept (0 is the
                         monopole), 0..TFMM_MAX_ORDER; fmm needs >= 1 (a
                         local expansion of degree 0 exerts no force);
                         TFMM_FROM_ACCURACY (the default): chosen */
  tfmm_mac_kind mac;  /* opening criterion; default TFMM_MAC_GEOMETRIC */
  double mac_epsilon; /* TFMM_MAC_ERROR: the error allowed per interaction
                         relative to the target's acceleration, > 0;
                         TFMM_FROM_ACCURACY (the default): chosen with theta
                         and order */
  int leaf_size;      /* L: most bodies a leaf may hold, >= 1 (bodies that
                         cannot be split apart stay together past L), or
                         TFMM_LEAF_AUTO: the solver chooses L, and re-chooses
                         it at every evaluation, to balance the near-field
                         time against the far-field time (which minimises
                         their sum on the CPU and their maximum when the GPU
                         does the near field). Auto gives up bit-for-bit
                         reproducibility between runs, since L follows
                         measured times; tfmm_stats.leaf_size reports the L
                         used. Default 64. Under the gpu schedule, a near
                         field whose lists would pass 2^31 - 1 entries
                         (~10^11 pairs: Plummer softening at the system's
                         scale at 10^6 bodies) is evaluated again at the
                         least L, by doublings, that holds them (at most
                         4096), kept for the next evaluations, and
                         tfmm_stats.plan says so */
  int max_depth;      /* deepest tree level, 1..TFMM_MAX_TREE_DEPTH;
                         default TFMM_MAX_TREE_DEPTH */
  double box_min[3];  /* tree methods: with box_size > 0, the cube the
                         tree's keys are taken in (lowest corner box_min,
                         side box_size) instead of the bodies' own bounding
                         cube, so that several solvers (several GPUs) share
                         one key space; every body must lie in it
                         (TFMM_ERR_INVALID_ARGUMENT naming the body) */
  double box_size;    /* 0 (default): the bodies' own cube */
  int num_threads;    /* OpenMP threads for CPU work, 0..TFMM_MAX_THREADS;
                         0 (default) leaves OpenMP's own choice
                         (OMP_NUM_THREADS, else all cores) */
  int gpu_id;         /* CUDA device ordinal; default 0 */
  tfmm_schedule_kind schedule; /* tree methods: see tfmm_schedule_kind;
                              default TFMM_SCHEDULE_AUTO. tree_device and
                              far_device apply to hybrid (gpu puts both on
                              the GPU; cpu for either with gpu is an error) */
  tfmm_device tree_device;     /* tree methods: where the tree and its
                             multipoles (P2M, M2M) are built. TFMM_DEVICE_CPU:
                             OpenMP; TFMM_DEVICE_GPU: the solver's GPU (device
                             gpu, or auto with a GPU present), the tree and
                             multipoles then copied back for the lists and the
                             far field on the CPU: the same tree and the same
                             multipoles bit for bit, so the same forces;
                             TFMM_DEVICE_AUTO (default): the GPU when the solver
                             has one and N >= TFMM_TREE_GPU_MIN_BODIES, else
                             the CPU. tfmm_stats.tree_device says where it ran */
  tfmm_device far_device;      /* tree methods: where the far field (M2L, L2L,
                              L2P, M2P) runs. TFMM_DEVICE_GPU: on the solver's
                              GPU, from the lists the CPU builds, beside the near
                              field there, with the same results as the CPU's bit
                              for bit (it takes the tree on the GPU too);
                              TFMM_DEVICE_CPU: OpenMP, beside the GPU's near
                              field; TFMM_DEVICE_AUTO (default): the GPU whenever
                              the tree is built there (tree_device). Stated in
                              tfmm_stats.far_device */
  int near_only; /* tree methods: 1 skips the far field, so that the
                    results are the near field alone (the sums over the
                    leaf lists, G applied): what validators compare
                    between the CPU and the GPU; default 0 */
  /* Tunables of the GPU all-pairs kernel (GPU Gems 3, section 31.4). A 0
   * asks the library to choose from N and the GPU's multiprocessor count;
   * the rules and defaults come from measurements on an H100
   * (bench/results/direct). tfmm_stats reports the values used. */
  int gpu_tile; /* p: bodies per shared-memory tile and threads per block
                   row; 0 (default) or a multiple of 32 in [32, 256] */
  int gpu_threads_per_body;  /* q: threads sharing one body's sum, their
                        partial sums combined at the end; 0 (default) or a
                        power of two with p*q <= 1024 threads (512 when
                        r = 4) and p*p*q <= 232448 bytes of shared memory */
  int gpu_unroll;            /* inner-loop unroll factor: 1, 2, 4, 8, 16 or
                                32; default 16 */
  int gpu_bodies_per_thread; /* r: target bodies each thread holds in
                       registers, sharing each source load: 0 (default),
                       1, 2 or 4 */
  /* Measured accuracy (tree methods; docs/accuracy.md). */
  tfmm_measure measure; /* which evaluations measure their error; default
                           TFMM_MEASURE_AUTO */
  int error_sample;     /* bodies a measurement samples, 0..2^24; 0
                           (default): chosen so that it costs about 5 % of
                           an evaluation at 10^6 bodies and more on a GPU
                           (about 220 bodies there; up to 4,000 at small N),
                           four times that while the settings are chosen */
  int verify;           /* 1: every evaluation measures, and one whose
                           measured 99th percentile is above accuracy fails
                           with TFMM_ERR_ACCURACY, its message naming the
                           figure and the setting (the outputs are then
                           written but not to be trusted); default 0 */
  /* Tree methods with Plummer softening: the kernel of the far field's
   * expansions (see tfmm_far_kernel); default TFMM_FAR_KERNEL_AUTO.
   * tfmm_stats.far_kernel says which ran. */
  tfmm_far_kernel far_kernel;
} tfmm_config;

/* tfmm_config.tree_device and far_device auto: the fewest bodies for
 * which the tree, its multipoles and the far field go to the GPU, where
 * the whole evaluation measured at least as fast as with them on the CPU
 * on the H100 machine (bench/results/hybrid_gpu_far, "Small N"). */
#define TFMM_TREE_GPU_MIN_BODIES 4096

/* tfmm_config.leaf_size: let the solver choose. */
#define TFMM_LEAF_AUTO 0

/* Timed phases of one force evaluation (seconds in tfmm_stats.time). */
typedef enum tfmm_phase {
  TFMM_PHASE_PREPARE = 0,  /* input checks, packing, coincidence check */
  TFMM_PHASE_UPLOAD = 1,   /* host to device copies */
  TFMM_PHASE_NEAR = 2,     /* pairwise interactions (the kernel on the GPU) */
  TFMM_PHASE_DOWNLOAD = 3, /* device to host copies */
  TFMM_PHASE_FINISH = 4,   /* unpacking, scaling by G, finiteness checks */
  TFMM_PHASE_TREE = 5,     /* keys, sort, permutation, cells, moments */
  TFMM_PHASE_UPWARD = 6,   /* P2M and M2M */
  TFMM_PHASE_LISTS = 7,    /* traversal: M2L (M2P) and near-field lists */
  TFMM_PHASE_FAR = 8,      /* M2L (FMM) or M2P (Barnes-Hut) */
  TFMM_PHASE_DOWNWARD = 9, /* L2L and L2P */
  TFMM_PHASE_COUNT = 10
} tfmm_phase;

/* What the last successful evaluation did and how long it took. */
typedef struct tfmm_stats {
  tfmm_method method;  /* the method used */
  tfmm_device device;  /* the device used: TFMM_DEVICE_CPU or _GPU */
  size_t n;            /* bodies */
  double interactions; /* body-body interactions evaluated: N (N - 1) for
                          all pairs, the near field's for tree methods */
  /* Tree methods (zero otherwise). */
  double m2l;     /* M2L translations (FMM) */
  double m2p;     /* cell-body evaluations (Barnes-Hut) */
  int tree_depth; /* deepest level */
  int64_t tree_cells, tree_leaves;
  int64_t leaf_min, leaf_max; /* bodies per leaf */
  double leaf_mean;
  int64_t tree_refits; /* a simulation with individual time steps under
                          the gpu schedule keeps its tree between
                          evaluations and refits it to the moved bodies at
                          its sub-steps (see tfmm_sim below): 0 when this
                          evaluation built its tree, else the refits since
                          the build, this one's included */
  double tree_growth;  /* the tree's growth since its build: the leaves' mean
                          (radius / radius at the build)^3; 1 when built */
  int leaf_size; /* the L this evaluation used (chosen, for TFMM_LEAF_AUTO) */
  double theta;  /* the opening angle used (chosen or given) */
  int order;     /* the expansion order used (chosen or given) */
  tfmm_precision precision;    /* of the pairwise sums (single or double) */
  double mac_epsilon;          /* the error criterion's epsilon used (0: another
                                  criterion) */
  tfmm_far_kernel far_kernel;  /* the far field's kernel (newton or
                                  softened; newton without softening) */
  double softening_separation; /* the closest two bodies of a far-field
                    cell pair may come: h for the spline, the distance at
                    which Plummer's force is within the target of Newton's
                    (theta and order given: within theta^(p+1)/(p+1)/20 if
                    smaller), 0 without softening */
  tfmm_schedule_kind schedule; /* tree methods: the schedule run (gpu or
                                  hybrid) */
  tfmm_device lists_device;    /* where the traversal ran */
  tfmm_device near_device;     /* where the near field ran */
  tfmm_device tree_device;     /* where the tree and the upward pass ran */
  tfmm_device far_device;      /* where the far field ran */
  /* Tree methods: the near field and the far field measured apart. On the
   * GPU the near field is the span from the first upload to the end of
   * the last download (CUDA events) and runs during the far field; on the
   * CPU the two run one after the other. */
  double near_time; /* seconds of the near field (GPU span, or CPU P2P) */
  double near_kernel_time; /* seconds of the near-field kernel alone (GPU;
                          equal to near_time on the CPU) */
  double far_time;         /* CPU seconds of the far field: P2M, M2M, M2L, L2L,
                              L2P, M2P */
  double overlap;          /* seconds during which the near and far fields both
                              ran (0 on the CPU) */
  double near_rate;        /* near-field interactions per second of
                              near_kernel_time */
  struct {
    double keys, sort, permute, build, moments; /* seconds */
  } tree_time;                   /* the stages of TFMM_PHASE_TREE */
  double time[TFMM_PHASE_COUNT]; /* seconds per phase; GPU phases are
                          measured with CUDA events */
  double time_total;             /* wall-clock seconds of the whole call */
  size_t device_bytes;           /* the gpu schedule: the most device memory its
                                    buffers have held at once (kept between calls;
                                    divided by n, the bytes a body costs); 0
                                    otherwise */
  /* GPU kernel parameters actually used (zero on the CPU). */
  int gpu_tile, gpu_threads_per_body, gpu_unroll, gpu_bodies_per_thread;
  char device_name[128]; /* "CPU (k threads)" or the GPU's name */
  size_t targets;        /* bodies whose forces were computed: n, or the active
                            bodies of tfmm_solver_compute_active (0: none, nothing
                            computed) */
  /* The error this evaluation measured (tfmm_config.measure): the
   * relative acceleration error |a - a_exact| / |a_exact| at a sample of
   * the bodies, a_exact summed over every body in double precision with
   * the same softening. The sample is stratified along the tree's key
   * order (every region in proportion to its bodies) plus a watch, in
   * the max only: one body of each of the smallest and the largest
   * leaves, and the body of least |a| of each of the leaves whose least
   * |a| is smallest (where pulls cancel, or far out: where relative
   * errors are largest). */
  struct {
    int measured;            /* 1: the fields below are this evaluation's */
    size_t samples;          /* bodies sampled */
    double median, p99, max; /* of the sample's errors */
    double p99_bound;        /* an upper bound on the 99th percentile over every
                                body, holding with probability `confidence`: the
                                sample's c-th largest error, c chosen from the
                                binomial law (the largest error when the sample
                                is too small for 0.95) */
    double confidence;       /* of p99_bound: 0.95, or less for small samples;
                                1 when every body was measured (the planner's
                                choice up to 4,096 bodies): p99_bound is p99 */
    int64_t worst_body;      /* input index of the largest error */
    double time;             /* seconds the measurement took (in time_total) */
    /* The worst group: the bodies of the leaf that holds worst_body, each
     * measured up to 256 of them (a larger leaf: 256 stratified along it,
     * worst_body among them), so that a group wrong together shows beside
     * the figures over every body: the bodies it holds, those measured,
     * and their median, 99th percentile (nearest rank) and largest error.
     * Over MPI ranks the leaf is that of the octree of every rank's bodies
     * in their common cube, its bodies taken in rank order. group_measured
     * 0: not measured. */
    size_t group_bodies, group_measured;
    double group_median, group_p99, group_max;
  } error;
  /* What the solver chose for theta and order and why (the planner:
   * measured error, the calibration's first guess, or the caller's
   * settings), one line. */
  char plan[512];
} tfmm_stats;

typedef struct tfmm_solver tfmm_solver;

/* What a solver's planner chose and measured (theta and order from the
 * accuracy target, tfmm_config.measure; docs/accuracy.md): read with
 * tfmm_solver_choice, given back with tfmm_solver_set_choice, so that a
 * simulation restarted from a checkpoint continues with the same settings
 * and the same measurements, bit for bit. All zero: nothing chosen. */
typedef struct tfmm_choice {
  int chosen;   /* 1: theta and order below are chosen */
  double theta; /* the setting */
  int order;
  double factor;            /* this input's measured error over the
                               calibration's at that setting */
  int since;                /* evaluations since its last measurement */
  uint64_t evaluations;     /* evaluations made (the samples' seeds) */
  size_t n;                 /* bodies of the last evaluation */
  double accuracy;          /* the target it was chosen for ... */
  int leaf, near_gpu;       /* ... at this leaf size, near field on the GPU */
  tfmm_precision precision; /* ... and precision setting */
  double failed_cost;       /* the calibration's cost of the dearest
                               setting measured to miss since the choice
                               began (-1: none): none as cheap is tried */
  double epsilon;           /* the error criterion's mac_epsilon, chosen
                               with theta and order from its calibrated
                               rows (0: another criterion) */
} tfmm_choice;

/* Fills cfg with the documented defaults. */
TFMM_API void tfmm_config_defaults(tfmm_config *cfg);

/* Creates a solver. On TFMM_OK, *out is ready. On any other status except
 * TFMM_ERR_NO_MEMORY, *out is still a handle whose message says what was
 * wrong (a bad configuration field, no GPU for TFMM_DEVICE_GPU, ...): read
 * it with tfmm_solver_message, then release it with tfmm_solver_destroy.
 * With TFMM_ERR_NO_MEMORY, *out is NULL. */
TFMM_API tfmm_status tfmm_solver_create(tfmm_solver **out,
                                        const tfmm_config *cfg);

/* The planner's state into *out (all zero when it has chosen nothing).
 * TFMM_ERR_INVALID_ARGUMENT for NULL. */
TFMM_API tfmm_status tfmm_solver_choice(const tfmm_solver *solver,
                                        tfmm_choice *out);

/* Sets the planner's state (from tfmm_solver_choice of another solver of
 * the same configuration): its next evaluation goes on as that solver's
 * would. A choice whose theta or order is out of range is
 * TFMM_ERR_INVALID_ARGUMENT, the solver unchanged. */
TFMM_API tfmm_status tfmm_solver_set_choice(tfmm_solver *solver,
                                            const tfmm_choice *choice);

/* Releases the solver and any device memory it holds. NULL is allowed. */
TFMM_API void tfmm_solver_destroy(tfmm_solver *solver);

/* Computes accelerations and potentials of n >= 1 bodies.
 * pos: 3n doubles (x0 y0 z0 x1 ...); mass: n doubles, each > 0;
 * acc: 3n doubles written; pot: n doubles written, or NULL to skip the
 * potential. Inputs must be finite. On failure the outputs' contents are
 * unspecified and the solver's message names the cause (and the body).
 * Under the gpu schedule (see tfmm_schedule_kind) the bodies are copied to
 * the GPU as they are and checked and scaled there, and the results come
 * back once, in the caller's units: arrays from tfmm_host_alloc (pinned)
 * move by one DMA each way at the speed of the bus; other arrays are
 * staged through pinned buffers of the solver, a few MiB at a time. */
TFMM_API tfmm_status tfmm_solver_compute(tfmm_solver *solver, size_t n,
                                         const double *pos, const double *mass,
                                         double *acc, double *pot);

/* Set-up apart from evaluation, as an FFT plan is made before the
 * transforms: takes now what the solver's first tfmm_solver_compute of
 * n host bodies would otherwise take inside its call, so that a one-shot
 * evaluation is timed as a kept one is. Under the gpu schedule on a GPU:
 * the device buffer of n bodies, the pinned buffers that stage pageable
 * arrays and the OpenMP team that copies through them (at 1M bodies on an
 * H200, 4-6 ms that were the first call's, most of it the pinned
 * buffers'; bench/results/host_transfer). Buffers whose size depends on
 * the bodies (the tree's cells, the interaction lists) are still taken by
 * the first evaluation. Optional: without it, or for more than n bodies,
 * an evaluation takes what it lacks; results are the same bits either
 * way. Nothing to do for the CPU, the hybrid schedule or a solver over
 * several processes: TFMM_OK. 1 <= n <= 2^31 - 1, else
 * TFMM_ERR_INVALID_ARGUMENT; TFMM_ERR_NO_MEMORY (or TFMM_ERR_CUDA) with
 * the message set when the device or host memory cannot be had, the
 * solver still usable. */
TFMM_API tfmm_status tfmm_solver_reserve(tfmm_solver *solver, size_t n);

/* Host memory for the arrays of tfmm_solver_compute (bodies in, results
 * out): `bytes` (0 counts as 1), aligned for any type, pinned
 * (page-locked, cudaHostAlloc) when this build has CUDA and a GPU can be
 * had, so that the solver copies it to and from the GPU at the speed of
 * the bus without staging; plain malloc memory otherwise (a build without
 * CUDA, no GPU, no pinned memory left). NULL when there is no memory at
 * all. Pinning costs about as much as one copy of the memory, so keep such
 * arrays between calls. Release with tfmm_host_free, never free(). */
TFMM_API void *tfmm_host_alloc(size_t bytes);

/* Releases memory from tfmm_host_alloc (pinned or not). NULL is allowed. */
TFMM_API void tfmm_host_free(void *p);

/* Whether p lies in pinned host memory (tfmm_host_alloc's when it could
 * pin, or memory the application pinned with CUDA): 0 for NULL, pageable
 * memory, device memory and in a build without CUDA. */
TFMM_API int tfmm_host_pinned(const void *p);

/* tfmm_solver_compute for bodies that live on the GPU: d_pos (3n), d_mass
 * (n) in, d_acc (3n) and d_pot (n, or NULL) out are device pointers on the
 * solver's GPU (cfg.gpu_id), and the work is ordered on `stream` (a
 * cudaStream_t; NULL: the default stream): it starts after what the caller
 * enqueued there before, and when the call returns the results are on the
 * device and the stream is idle. The results are those of
 * tfmm_solver_compute on the same bodies, bit for bit. The solver must run
 * on the GPU (TFMM_ERR_NO_DEVICE otherwise; TFMM_ERR_UNSUPPORTED in a build
 * without CUDA). Under the gpu schedule (a tree method, TFMM_SCHEDULE_GPU
 * or auto from TFMM_TREE_GPU_MIN_BODIES) the bodies never leave the
 * device: they are checked, scaled and evaluated there. Otherwise (the
 * direct method, hybrid) they travel to the host and back inside the
 * call. */
TFMM_API tfmm_status tfmm_solver_compute_device(tfmm_solver *solver, size_t n,
                                                const double *d_pos,
                                                const double *d_mass,
                                                double *d_acc, double *d_pot,
                                                void *stream);

/* tfmm_solver_compute at the active bodies only, for individual (block)
 * time steps: active is n bytes, nonzero for a target (NULL: every body,
 * exactly tfmm_solver_compute). Sources are all n bodies. acc and pot are
 * written at the active bodies only; the other entries keep what they
 * held. An active set with no body returns TFMM_OK and writes nothing
 * (the inputs are still checked). Errors as for tfmm_solver_compute: the
 * checks of the inputs and of coincident bodies are those of the whole
 * evaluation; results not finite are looked for at the active bodies.
 * tfmm_stats.targets counts the active bodies.
 *
 * The results at the active bodies are tfmm_solver_compute's at them:
 *  - reference, direct on the CPU, fmm and bh under the hybrid schedule
 *    (tree, far field and near field where tree_device, far_device and
 *    device put them): bit for bit;
 *  - direct on the GPU: bit for bit (every body is computed; the
 *    work does not shrink);
 *  - the gpu schedule: bit for bit on small inputs, to rounding on large
 *    ones (a few units of the near field's precision relative to a
 *    body's force: at most 1e-5 measured at 16M bodies in single
 *    precision), because the GPU sizes its work by the work at hand: the
 *    near field cuts its work items by a budget that grows once the whole
 *    evaluation holds more than 2^30 near pairs (about 10^5 Plummer bodies
 *    at the defaults), the M2L gives a target cell fewer lanes on trees of
 *    more than 4096 cells (and at a subset, the lanes of the cells that
 *    hold an active body), and the traversal slices frontiers past 2^23
 *    pairs. The hybrid schedule with its near field on the GPU: bit for
 *    bit under the same near-field bound, to rounding past it.
 * The work shrinks with the active set: the tree and its multipoles are
 * built for all n bodies (the sources); the traversal opens no target cell
 * without an active body, so that M2L, L2L, L2P, M2P and P2P run only at
 * cells and leaves that hold one (a leaf's every body is computed, its
 * active ones written). With leaf_size TFMM_LEAF_AUTO, only whole
 * evaluations re-choose the leaf size. */
TFMM_API tfmm_status tfmm_solver_compute_active(tfmm_solver *solver, size_t n,
                                                const double *pos,
                                                const double *mass,
                                                const unsigned char *active,
                                                double *acc, double *pot);

/* The same for bodies on the GPU (as tfmm_solver_compute_device); d_active
 * is a device array of n bytes (NULL: tfmm_solver_compute_device). Under
 * the gpu schedule nothing leaves the device and only the active entries
 * of d_acc and d_pot are written; otherwise the bodies, the targets and
 * the outputs travel to the host and back inside the call (the inactive
 * entries go back as they came). */
TFMM_API tfmm_status tfmm_solver_compute_active_device(
    tfmm_solver *solver, size_t n, const double *d_pos, const double *d_mass,
    const unsigned char *d_active, double *d_acc, double *d_pot, void *stream);

/* The double-precision reference (compensated sums, as the reference
 * method) at k chosen bodies only, with the solver's G and eps: what
 * validators compare a method with on large N, in O(n k). targets: k
 * indices into [0, n); acc: 3k and pot: k (or NULL) in the order of
 * targets. With eps = 0, a target at the same point as another body is an
 * error naming both. */
TFMM_API tfmm_status tfmm_solver_reference_at(tfmm_solver *solver, size_t n,
                                              const double *pos,
                                              const double *mass, size_t k,
                                              const size_t *targets,
                                              double *acc, double *pot);

/* The message of the last failure, or "" after a success. Never NULL. */
TFMM_API const char *tfmm_solver_message(const tfmm_solver *solver);

/* Statistics of the last successful tfmm_solver_compute. */
TFMM_API const tfmm_stats *tfmm_solver_stats(const tfmm_solver *solver);

/* The device the solver resolved to at creation: CPU or GPU. */
TFMM_API tfmm_device tfmm_solver_device(const tfmm_solver *solver);

/* Number of usable CUDA devices: 0 when there are none or when the library
 * was built without CUDA. */
TFMM_API int tfmm_gpu_count(void);

/* The same count, and why the GPUs present are not all usable: writes to
 * message (size bytes, always NUL-terminated; NULL with size 0 to skip it)
 * one line for each GPU this library cannot use, naming it (number, name,
 * compute capability), the reason (no code for its architecture in this
 * build, a driver older than the CUDA runtime, a build without CUDA on a
 * machine with a GPU, ...) and the fix (rebuild with
 * -DCMAKE_CUDA_ARCHITECTURES=..., update the driver), lines separated by
 * '\n'. "" when there is nothing to fix: every GPU present is usable, or
 * none is present. Applications print it; the library never does. */
TFMM_API int tfmm_gpu_check(char *message, size_t size);

/* Whether this build contains the CUDA backend. */
TFMM_API int tfmm_has_cuda(void);

/* Short names ("invalid argument", "reference", "gpu", "near", ...). */
TFMM_API const char *tfmm_status_name(tfmm_status status);
TFMM_API const char *tfmm_method_name(tfmm_method method);
TFMM_API const char *tfmm_device_name(tfmm_device device);
TFMM_API const char *tfmm_phase_name(tfmm_phase phase);

TFMM_API const char *tfmm_softening_name(tfmm_softening softening);
TFMM_API const char *tfmm_precision_name(tfmm_precision precision);
TFMM_API const char *tfmm_mac_name(tfmm_mac_kind mac);
TFMM_API const char *tfmm_schedule_name(tfmm_schedule_kind schedule);
TFMM_API const char *tfmm_far_kernel_name(tfmm_far_kernel kernel);

/* Parse "reference"/"direct"/"fmm"/"bh", "auto"/"cpu"/"gpu",
 * "plummer"/"spline", "single"/"double"/"auto", "geometric"/"mass"/"error",
 * "auto"/"gpu"/"hybrid" and "auto"/"newton"/"softened". Return
 * TFMM_ERR_INVALID_ARGUMENT for anything else, leaving *out unchanged. */
TFMM_API tfmm_status tfmm_method_parse(const char *name, tfmm_method *out);
TFMM_API tfmm_status tfmm_device_parse(const char *name, tfmm_device *out);
TFMM_API tfmm_status tfmm_softening_parse(const char *name,
                                          tfmm_softening *out);
TFMM_API tfmm_status tfmm_precision_parse(const char *name,
                                          tfmm_precision *out);
TFMM_API tfmm_status tfmm_mac_parse(const char *name, tfmm_mac_kind *out);
TFMM_API tfmm_status tfmm_schedule_parse(const char *name,
                                         tfmm_schedule_kind *out);
TFMM_API tfmm_status tfmm_far_kernel_parse(const char *name,
                                           tfmm_far_kernel *out);

/* The opening angle and order that tfmm_solver_compute would use for cfg
 * (those it gives, the rest chosen from cfg->accuracy: with measure not
 * off, the planner's first guess, from which measurement may move it),
 * and the closest
 * approach of a far-field cell pair that the softening allows. Checks cfg
 * as tfmm_solver_create does; the message goes to msg (size bytes) if not
 * NULL. */
TFMM_API tfmm_status tfmm_config_resolve(const tfmm_config *cfg, double *theta,
                                         int *order, double *separation,
                                         char *msg, size_t size);

/* What a configuration becomes on this machine (tfmm_plan_resolve): the
 * settings a solver created from it runs n bodies with. The library makes
 * these choices here and nowhere else; the CLI and the Python package read
 * them rather than choosing again. */
typedef struct tfmm_plan {
  tfmm_method method;
  tfmm_device device; /* CPU or GPU: where direct runs, and where fmm and bh
                         run their near field (device auto: the GPU when
                         gpu_id can run the kernels); reference: the CPU */
  /* Tree methods (fmm, bh); zero for the others unless said. */
  tfmm_schedule_kind schedule; /* gpu or hybrid for n bodies; the all-pairs
                                  methods: TFMM_SCHEDULE_AUTO */
  tfmm_device tree_device;     /* where the tree and its multipoles are
                                  built for n bodies (all pairs: device) */
  tfmm_device far_device;      /* where the far field runs (all pairs:
                                  device) */
  int leaf_size;               /* L of the first evaluation: leaf_size, or for
                                  TFMM_LEAF_AUTO the first L the solver tries
                                  (64 with the near field on the CPU, 512 on
                                  the GPU) */
  double theta;                /* opening angle; with theta or order from
                                  the accuracy and measure not off, the
                                  planner's first guess: the solver may move
                                  from it after measuring (tfmm_stats.theta,
                                  .plan) */
  int order;                   /* expansion order (the same) */
  tfmm_precision precision;    /* of the pairwise sums: single or double
                                  (every method) */
  tfmm_mac_kind mac;           /* opening criterion (every method) */
  double mac_epsilon;          /* TFMM_MAC_ERROR: per interaction; else 0 */
  double separation;           /* closest approach of a far-field cell pair
                                  that the softening allows, in the units of
                                  cfg->eps (0 with the softened kernel) */
  tfmm_far_kernel far_kernel;  /* the far field's kernel for n bodies:
                                  newton or softened (auto resolved) */
} tfmm_plan;

/* Resolves cfg for n bodies (0 when not yet known: the plan of small N)
 * into *plan: checks cfg as tfmm_solver_create does, chooses the device,
 * then the leaf size, the stages, theta, order, precision and the
 * criterion's epsilon as tfmm_solver_compute would. TFMM_ERR_NO_DEVICE
 * when the GPU cfg asks for cannot be had (*plan is filled all the same,
 * on the CPU unless device gpu was asked; a cfg that breaks a rule leaves
 * it as it was); the message goes to msg (size bytes) if not NULL. */
TFMM_API tfmm_status tfmm_plan_resolve(const tfmm_config *cfg, size_t n,
                                       tfmm_plan *plan, char *msg, size_t size);

/* "major.minor.patch" */
TFMM_API const char *tfmm_version(void);

/* The layout of the public structs as this library was compiled, for
 * bindings in other languages that mirror them (the Python package checks
 * every field at import, so that a library and a binding that disagree
 * fail there and not with corrupted settings). type: "tfmm_config",
 * "tfmm_stats", "tfmm_diagnostics", "tfmm_sim_config", "tfmm_sim_state",
 * "tfmm_step_stats" or "tfmm_plan"; field: one of its fields as C names it
 * ("eps", "tree_time.keys"), or NULL for the struct itself. Writes the
 * field's offset in bytes (0 for the struct) and its size (sizeof); an
 * unknown type or field is TFMM_ERR_INVALID_ARGUMENT, leaving both
 * unchanged. */
TFMM_API tfmm_status tfmm_struct_layout(const char *type, const char *field,
                                        size_t *offset, size_t *size);

/* The fields of type that tfmm_struct_layout knows, in declaration order:
 * the first min(count, size) names go to names (NULL: none are written;
 * the strings are the library's). Returns the count, or -1 for an unknown
 * type. */
TFMM_API int tfmm_struct_fields(const char *type, const char **names, int size);

/* Initial conditions: an isotropic Plummer sphere in N-body units
 * (G = M = 1, total energy E = -1/4, scale length 3 pi / 16), with equal
 * masses 1/n, its centre of mass at rest at the origin. Aarseth, Henon &
 * Wielen (1974), A&A 37, 183. The same (n, seed) gives the same bits on
 * every machine. pos and vel: 3n doubles; mass: n doubles. */
TFMM_API tfmm_status tfmm_ic_plummer(size_t n, uint64_t seed, double *pos,
                                     double *vel, double *mass);

/* Further initial conditions, all in N-body units (G = M = 1, E = -1/4
 * for the models in equilibrium), equal masses 1/n, centre of mass at rest
 * at the origin, and the same bits for the same (n, seed) on every
 * machine. pos and vel: 3n doubles; mass: n doubles. */

/* Hernquist (1990, ApJ 356, 359) sphere: density proportional to
 * 1 / (r (r + a)^3), scale length a = 1/3 (E = -1/(12 a) = -1/4 for the
 * whole model), cut at the radius holding 99.9% of the mass (r = 666),
 * velocities drawn from the isotropic distribution function (Hernquist
 * eq. 17). The cut sample has E = -0.2507 and 2K/|W| = 0.999 on average.
 * Its r^-4 tail makes the centre of mass a noisy estimate of the centre:
 * moving it to the origin leaves the cusp ~21/sqrt(n) (rms) off it. */
TFMM_API tfmm_status tfmm_ic_hernquist(size_t n, uint64_t seed, double *pos,
                                       double *vel, double *mass);

/* A homogeneous sphere of radius 6/5 with isotropic Gaussian velocities
 * scaled to virial equilibrium (2K = -W, so E = W/2 = -1/4). Each velocity
 * component is the sum of 12 uniform deviates minus 6 (mean 0, variance
 * 1, no transcendental); the velocities are then scaled so that K is
 * exactly 1/4, the analytic -W/2. */
TFMM_API tfmm_status tfmm_ic_uniform(size_t n, uint64_t seed, double *pos,
                                     double *vel, double *mass);

/* The cold collapse: a homogeneous sphere of radius 12/5 at rest
 * (E = W = -3/(5 R) = -1/4), which falls in a free-fall time
 * pi / 2 * sqrt(R^3 / 2) = 4.13. */
TFMM_API tfmm_status tfmm_ic_cold(size_t n, uint64_t seed, double *pos,
                                  double *vel, double *mass);

/* Two Plummer spheres (as tfmm_ic_plummer, each of mass 1/2 and n/2 bodies,
 * the first holding the odd one) on the bound Keplerian orbit of two point
 * masses with apocentre 4 and pericentre 1/2, starting at apocentre in the
 * x-y plane; first pericentre at t = 10.6. Each sphere's velocities are
 * scaled by sqrt(m) (its mass m = n_k / n: 1/2 for an even n), so that it
 * stays in equilibrium; each comes from its own random stream. The first
 * sphere starts on +x moving along +y (angular momentum along +z). n >= 2
 * (n = 2: the two point masses). */
TFMM_API tfmm_status tfmm_ic_merger(size_t n, uint64_t seed, double *pos,
                                    double *vel, double *mass);

/* A model made in N-body units (G = M = 1, virial radius 1) as the same
 * physical model of total mass M and virial radius R in units where the
 * gravitational constant is G: masses times M, positions times R,
 * velocities times sqrt(G M / R), so that its time unit is
 * sqrt(R^3 / (G M)) (Heggie & Mathieu 1986). M = R = G = 1 leaves every
 * bit as it is. M, R and G must be finite and > 0. */
TFMM_API tfmm_status tfmm_ic_scale(size_t n, double M, double R, double G,
                                   double *pos, double *vel, double *mass);

/* Time integration: the kick-drift-kick leapfrog, one step of length dt
 * being kick(dt/2), drift(dt), new accelerations, kick(dt/2). Each is an
 * element-wise update (OpenMP), so its result is independent of the thread
 * count. */

/* vel += h * acc, for 3n components. */
TFMM_API void tfmm_leapfrog_kick(size_t n, double *vel, const double *acc,
                                 double h);

/* pos += h * vel, for 3n components. */
TFMM_API void tfmm_leapfrog_drift(size_t n, double *pos, const double *vel,
                                  double h);

/* Conserved quantities and the virial ratio of a system. */
typedef struct tfmm_diagnostics {
  double mass;                /* total mass */
  double kinetic;             /* K = sum m v^2 / 2 */
  double potential;           /* W = sum m phi / 2 (phi as computed, with
                                 G and softening) */
  double total;               /* E = K + W */
  double virial_ratio;        /* 2 K / |W| (1 in equilibrium); 0 if W = 0 */
  double momentum[3];         /* P = sum m v */
  double angular_momentum[3]; /* L = sum m x cross v, about the origin */
  double centre_of_mass[3];   /* sum m x / M */
} tfmm_diagnostics;

/* Sums in double with compensation, in a fixed order independent of the
 * thread count (the same bits every run). pot: the potentials phi_i of a
 * force evaluation. TFMM_ERR_INVALID_ARGUMENT for n = 0 or NULL arrays. */
TFMM_API tfmm_status tfmm_diagnostics_compute(size_t n, const double *pos,
                                              const double *vel,
                                              const double *mass,
                                              const double *pot,
                                              tfmm_diagnostics *out);

/* ---- The simulation ----------------------------------------------------
 * A tfmm_sim owns the bodies, their forces, the step count and the solver,
 * and advances them with the kick-drift-kick leapfrog above, one global
 * step dt: step k goes from time_initial + k dt to time_initial + (k + 1)
 * dt as
 *   tfmm_leapfrog_kick(n, vel, acc, dt / 2);
 *   tfmm_leapfrog_drift(n, pos, vel, dt);
 *   tfmm_solver_compute(solver, n, pos, mass, acc, pot);
 *   tfmm_leapfrog_kick(n, vel, acc, dt / 2);
 * bit for bit, so a sim gives the bits of those calls made by hand, and a
 * sim restored from a saved state (tfmm_sim_save, tfmm_sim_restore)
 * continues as the sim straight through would have (with individual time
 * steps: as the sim that saved it does; below). The time is always
 * computed afresh as time_initial + step * dt, never accumulated.
 *
 * With individual time steps under the gpu schedule, a sim on one process
 * keeps its tree between evaluations: a sub-step (an evaluation at the
 * active bodies only) refits the cells to the moved bodies (their mass,
 * centre and radius taken anew, the cells and the bodies' order kept)
 * instead of building them, until the leaves' growth has cost about a
 * build; an evaluation of every body builds (tfmm_stats.tree_refits and
 * tree_growth say which; the rule and its measurements:
 * src/pipeline/tree_life.h). The opening criterion reads the refit cells,
 * so the forces keep the accuracy asked, though not the same bits as a
 * new tree's. Every state saved (tfmm_sim_save, tfmm_sim_save_begin) is
 * followed by a build, as a restart from it begins with one: so a restart
 * repeats the bits of the sim that saved the state, though in the middle
 * of a hierarchy a sim that saves its state takes other bits than one
 * that does not. With one global step every evaluation builds. A
 * sub-step of so few active bodies k that k n <= 2^30 is not evaluated
 * by the tree at all: every body's pull on each of them is summed in
 * double precision on the GPU (the reference's pair formula), exact to
 * rounding and cheaper than a tree's evaluation there
 * (tfmm_step_stats.direct_substeps counts them).
 *
 * Individual time steps (tfmm_sim_config.eta > 0) follow GADGET-4 and
 * SWIFT: every body takes steps of dt_max / 2^k for its own k (its bin),
 * the longest with dt_i <= sqrt(2 eta eps / |a_i|), eps the solver's
 * softening length and a_i its acceleration (G included). Time is counted
 * in ticks of dt_max / 2^K (K = floor(log2(dt_max / dt_min)) <= 40); a
 * step of a body in bin b lasts 2^b ticks and begins on a multiple of
 * 2^b. A sim step goes to the next tick at which some body's step ends:
 *   - bodies whose step ended at the current tick (synchronised) get their
 *     new bin from their acceleration (at most the largest bin whose steps
 *     begin at this tick) and the opening half kick v += a 2^b tick / 2;
 *   - every body drifts to the next tick;
 *   - the forces are computed at the bodies whose step ends there (the
 *     active ones, tfmm_solver_compute_active; the sources are every body
 *     at its drifted position), which get the closing half kick.
 * A body's bin thus changes only at the end of its own step, and each
 * step is kick-drift-kick about its own middle. The bodies are all
 * synchronised at multiples of dt_max (synchronisation points): the
 * diagnostics, tfmm_sim_advance_to and the outputs of tilefmm run happen
 * there. With one global step (eta = 0) this is the scheme above with one
 * bin, K = 0 and a tick of dt, bit for bit.
 *
 * The bodies keep the caller's order. With a solver on the CPU they live on
 * the host; with one on the GPU (tfmm_solver_device) they live in its
 * memory from tfmm_sim_create on: the kicks, drifts, bins and diagnostics
 * run there (the same bits as the host's, the diagnostics summed in double
 * with compensation but not in the host's order), and the state reaches
 * the host only when a call reads it (tfmm_sim_save, _save_begin/_end,
 * tfmm_sim_step_criterion).
 *
 * Errors: every call that can fail returns a tfmm_status and leaves a
 * message on the sim (tfmm_sim_message), as the solver does. */

typedef struct tfmm_sim tfmm_sim;

/* Simulation configuration: fill with tfmm_sim_config_defaults, then
 * change fields. */
typedef struct tfmm_sim_config {
  tfmm_config solver;  /* the forces: every field as documented for
                          tfmm_config; default tfmm_config_defaults' */
  double dt;           /* the time step, finite and > 0, in the caller's time
                          units; default 1/128 (0.0078125: a power of two,
                          so that step * dt is exact) */
  double time_initial; /* time of the bodies given to tfmm_sim_create,
                          finite; default 0. tfmm_sim_restore takes it from
                          the state instead */
  double eta;          /* > 0: individual time steps (see above), the accuracy
                          parameter of the criterion sqrt(2 eta eps / |a|); the
                          solver's eps must then be > 0. 0 (default): the one
                          global step dt. SWIFT's and GADGET-4's usual value is
                          0.025 */
  double dt_max;       /* individual steps: the longest step, finite and > 0, a
                          synchronisation point every dt_max; 0 (default): dt */
  double dt_min;       /* individual steps: the shortest step is dt_max / 2^K,
                          K = floor(log2(dt_max / dt_min)), at most 40 bins
                          below dt_max; bodies that ask for less take it, and
                          are counted (tfmm_step_stats.short_steps). 0
                          (default): dt_max / 2^16 */
  int keep_tree;       /* individual steps under the gpu schedule: 1
                          (default) the sub-steps refit the tree kept from
                          the last build while that pays (see above); 0
                          every evaluation builds its tree */
} tfmm_sim_config;

/* The whole state a restart needs, as tfmm_sim_save gives it and
 * tfmm_sim_restore takes it. The arrays are the caller's (restore) or the
 * sim's (save: valid until the next call that changes the sim, or its
 * destruction). */
typedef struct tfmm_sim_state {
  size_t n;                       /* bodies, >= 1 */
  const double *pos, *vel, *mass; /* 3n, 3n, n */
  const double *acc, *pot;        /* 3n, n: the forces at pos, G applied */
  const uint64_t *ids;            /* n: the bodies' ids; tfmm_sim_restore
                                     accepts NULL for 1..n */
  int64_t step;                   /* steps done since time_initial, >= 0 */
  double time_initial;            /* time at step 0 */
  double energy_initial;          /* total energy E = K + W at step 0,
                                     the base of the relative energy error */
  int64_t ticks;                  /* the time since time_initial in ticks;
                                     0 with tick 0 and bins NULL: a state
                                     of one global step (ticks = step) */
  double tick;                    /* the length of a tick (dt with one
                                     global step, dt_max / 2^K with
                                     individual steps); 0 as above */
  const signed char *bins;        /* n: the bodies' bins (steps of 2^bin
                                     ticks); NULL: all 0. Mid-way through
                                     a body's step (ticks not a multiple
                                     of 2^bin) its velocity is the one
                                     half-kicked at the step's start */
  tfmm_choice choice;             /* the solver's planner at the state
                                     (tfmm_solver_choice): a restart goes
                                     on with it, bit for bit; all zero: the
                                     restarted solver chooses afresh */
} tfmm_sim_state;

/* What the last tfmm_sim_start, tfmm_sim_step or tfmm_sim_advance_to did
 * and how long it took (wall-clock seconds). The last force evaluation's
 * own statistics are tfmm_solver_stats(tfmm_sim_solver(sim)). */
typedef struct tfmm_step_stats {
  int64_t steps;         /* steps taken */
  int64_t evaluations;   /* force evaluations (steps, plus one for the
                            forces at step 0 when the call computed them) */
  double time_integrate; /* kicks and drifts */
  double time_forces;    /* force evaluations (tfmm_solver_compute) */
  double time_total;     /* the whole call */
  int64_t updates;       /* bodies given forces (the active bodies summed
                            over the steps) */
  int64_t short_steps;   /* bodies whose criterion asked for a step
                            shorter than the shortest (dt_min), summed over
                            the steps: more than a few means dt_min is too
                            long, or eps too small, for eta */
  /* The force evaluations' parts, summed over them (from their
   * tfmm_stats): the tree (TFMM_PHASE_TREE), the lists
   * (TFMM_PHASE_LISTS), the near field and the far field (near_time and
   * far_time; a direct method counts as near field). */
  double time_tree, time_lists, time_near, time_far;
  int64_t tree_refits;     /* evaluations that refit the kept tree instead of
                              building it (individual time steps under the gpu
                              schedule; tfmm_stats.tree_refits) */
  int64_t direct_substeps; /* sub-steps whose few active bodies were summed
                              directly over every body on the GPU, in
                              double precision, instead of by the tree
                              (their time counts as near field) */
} tfmm_step_stats;

/* Fills cfg with the documented defaults. */
TFMM_API void tfmm_sim_config_defaults(tfmm_sim_config *cfg);

/* Creates a simulation of n >= 1 bodies at cfg->time_initial, step 0.
 * pos, vel: 3n doubles, finite; mass: n doubles, finite and > 0; ids: n
 * ids, or NULL for 1..n. All are copied. The forces are not computed yet
 * (tfmm_sim_start does, or the first step): until then the accelerations,
 * potentials and energy_initial read NaN. On TFMM_OK, *out is ready. On any
 * other status *out is still a handle whose message says what was wrong (a
 * bad field, body or solver setting, no GPU for TFMM_DEVICE_GPU, ...):
 * read it with tfmm_sim_message, then release it with tfmm_sim_destroy;
 * *out is NULL only when the handle itself could not be allocated
 * (TFMM_ERR_NO_MEMORY). */
TFMM_API tfmm_status tfmm_sim_create(tfmm_sim **out, const tfmm_sim_config *cfg,
                                     size_t n, const double *pos,
                                     const double *vel, const double *mass,
                                     const uint64_t *ids);

/* Creates a simulation from a saved state: its bodies, forces, step,
 * time_initial (cfg->time_initial is not used) and energy_initial, with
 * cfg's dt and solver. The forces are taken as they are, not computed
 * again, so the next step is that of the sim the state was saved from, bit
 * for bit, when cfg is that sim's (and the solver runs where it ran:
 * the CPU's and the GPU's forces differ in their last bits). Besides
 * tfmm_sim_create's checks: acc and pot finite, step >= 0, time_initial
 * and energy_initial finite. *out as for tfmm_sim_create. */
TFMM_API tfmm_status tfmm_sim_restore(tfmm_sim **out,
                                      const tfmm_sim_config *cfg,
                                      const tfmm_sim_state *state);

/* Releases the simulation and its solver. NULL is allowed. */
TFMM_API void tfmm_sim_destroy(tfmm_sim *sim);

/* Computes the forces at the current positions if they are not known yet
 * (a sim from tfmm_sim_create, at step 0, whose forces failed or were
 * never asked for), and energy_initial from them. Does nothing otherwise
 * (a restored sim has its forces). tfmm_sim_step and
 * tfmm_sim_advance_to call it first. On failure nothing else changes and
 * the accelerations and potentials read NaN. */
TFMM_API tfmm_status tfmm_sim_start(tfmm_sim *sim);

/* Takes nsteps >= 0 kick-drift-kick steps (with individual steps, each to
 * the next tick at which some body's step ends; see above). On a failed
 * force evaluation
 * (two bodies met with eps = 0, say) the message names the step (the steps
 * done when it began) and the cause; that step's kick and drift are done,
 * so the bodies are part-way through it, and every later call that
 * steps, saves or diagnoses (tfmm_sim_start, _step, _advance_to, _save,
 * _diagnostics) returns the same status with the same message. */
TFMM_API tfmm_status tfmm_sim_step(tfmm_sim *sim, int64_t nsteps);

/* Steps on to the first synchronisation point (time_initial + k dt, dt
 * being dt_max with individual steps) that is at or after t, where a time
 * within 1e-9 dt below a grid point counts as on it (t_end of `tilefmm
 * run` ends on the same step): k = ceil((t - time_initial) / dt - 1e-9).
 * tfmm_sim_time tells the time reached, which is t itself only when t is
 * on the grid. A t before the current time (k dt before it) or not finite
 * is refused (TFMM_ERR_INVALID_ARGUMENT), as is one more than 10^15 steps
 * away. Failures as for tfmm_sim_step. */
TFMM_API tfmm_status tfmm_sim_advance_to(tfmm_sim *sim, double t);

/* The current time, time_initial + ticks * tick (steps * dt with one
 * global step); NaN for NULL. */
TFMM_API double tfmm_sim_time(const tfmm_sim *sim);

/* Steps done since time_initial (a restored sim counts the steps before
 * its state was saved); 0 for NULL. */
TFMM_API int64_t tfmm_sim_steps(const tfmm_sim *sim);

/* Synchronisation points passed since time_initial: the time is
 * time_initial + this * dt (dt_max with individual steps) when
 * tfmm_sim_synchronised; with one global step, the steps. 0 for NULL. */
TFMM_API int64_t tfmm_sim_syncs(const tfmm_sim *sim);

/* 1 when every body is at the current time (its step ended there): at a
 * synchronisation point, and always with one global step; 0 otherwise or
 * for NULL. */
TFMM_API int tfmm_sim_synchronised(const tfmm_sim *sim);

/* The bodies in each bin: counts[b] for b = 0 .. min(K, size - 1), bin b
 * taking steps of dt_max / 2^(K - b). Returns K (0 with one global step),
 * or -1 for NULL. */
TFMM_API int tfmm_sim_bins(const tfmm_sim *sim, int64_t *counts, int size);

/* The criterion at the current accelerations, for a given eta (> 0) and
 * the solver's eps: the shortest sqrt(2 eta eps / |a_i|) over the bodies
 * in *shortest, and in *longer (may be NULL) the bodies for which the
 * step (dt, or dt_max with individual steps) is longer than theirs: what
 * a fixed step should be checked against. Computes the forces first when
 * they are not known. TFMM_ERR_INVALID_ARGUMENT with eps = 0 (the
 * criterion needs a softening length) or eta not > 0. */
TFMM_API tfmm_status tfmm_sim_step_criterion(tfmm_sim *sim, double eta,
                                             double *shortest, size_t *longer);

/* The number of bodies; 0 for NULL. */
TFMM_API size_t tfmm_sim_count(const tfmm_sim *sim);

/* The state: bodies, forces, step, time_initial, energy_initial, ticks,
 * tick and bins, as views
 * of the sim's arrays (see tfmm_sim_state), to read or to write out as a
 * snapshot or a checkpoint. Before the forces are computed (see
 * tfmm_sim_create) acc, pot and energy_initial are NaN, and
 * tfmm_sim_restore refuses such a state. After a failed step (see
 * tfmm_sim_step) there is no state to save: that step's status again,
 * with its message. On failure *out is zeroed. */
TFMM_API tfmm_status tfmm_sim_save(tfmm_sim *sim, tfmm_sim_state *out);

/* tfmm_sim_save in two halves, so that a snapshot is copied out while the
 * sim goes on: tfmm_sim_save_begin takes the state as it is now (with the
 * state on the GPU, a copy on the device and then to pinned host memory on
 * a second stream; on the CPU, a copy) and returns without waiting for
 * the copy; tfmm_sim_save_end waits for it and gives the state of the
 * begin, whatever steps were taken since, as views valid until the second
 * tfmm_sim_save_begin after that begin, or the sim's destruction: the
 * states of two begins are held at once (the last one's views may be read,
 * by a writer, while the next is taken and copied). The failures of
 * tfmm_sim_save; tfmm_sim_save_end without a begin is refused
 * (TFMM_ERR_INVALID_ARGUMENT). */
TFMM_API tfmm_status tfmm_sim_save_begin(tfmm_sim *sim);
TFMM_API tfmm_status tfmm_sim_save_end(tfmm_sim *sim, tfmm_sim_state *out);

/* The conserved quantities at the current step (tfmm_diagnostics_compute
 * of the bodies and their potentials), computing the forces first when
 * they are not known (tfmm_sim_start). Only at a synchronisation point
 * (tfmm_sim_synchronised; TFMM_ERR_INVALID_ARGUMENT elsewhere). energy_error,
 * if not NULL, gets the relative energy error (E - E_initial) / |E_initial| (0
 * when E_initial = 0). On failure *out and *energy_error are NaN. */
TFMM_API tfmm_status tfmm_sim_diagnostics(tfmm_sim *sim, tfmm_diagnostics *out,
                                          double *energy_error);

/* The solver the sim evaluates forces with: its statistics
 * (tfmm_solver_stats: the last evaluation's timings, tree, device) and
 * device (tfmm_solver_device). Owned by the sim; NULL for NULL. */
TFMM_API const tfmm_solver *tfmm_sim_solver(const tfmm_sim *sim);

/* What the last tfmm_sim_start, tfmm_sim_step or tfmm_sim_advance_to did
 * (see tfmm_step_stats); all zeros before the first. NULL for NULL. */
TFMM_API const tfmm_step_stats *tfmm_sim_stats(const tfmm_sim *sim);

/* The message of the last failure, or "" after a success. Never NULL. */
TFMM_API const char *tfmm_sim_message(const tfmm_sim *sim);

/* ---- Several processes: MPI ----------------------------------------------
 *
 * A library built with MPI (tfmm_has_mpi) computes the forces of bodies
 * spread over the processes of a communicator. Each process (rank) gives
 * its own bodies, any of them, any number (0 included) as long as the
 * communicator holds at least one; each gets the forces on its bodies from
 * every body of every rank. Every call on a solver or sim made with a
 * communicator is collective: every rank makes it, in the same order, with
 * the same configuration. A failure on one rank is every rank's failure:
 * each returns a status other than TFMM_OK, the failing rank's message
 * names the cause, and the others' say which rank failed and why.
 *
 * How (docs/mpi.md): the bodies are split along the Morton curve of the
 * common bounding cube into one contiguous key range per rank, sized so
 * that each holds an equal share of the measured cost (each rank's last
 * evaluation time per body, re-measured every evaluation). Each rank
 * builds the octree of the bodies in its range and sends every other rank
 * its locally essential tree: the multipoles (order p of the accuracy
 * asked for) of its cells far from that rank's bodies by the opening
 * criterion and the softening separation, and the bodies of the leaves
 * that are not. A rank's forces are its own solver's (CPU or GPU, any
 * schedule) on its bodies and the bodies received, plus the received
 * multipoles through M2L into its tree and M2P at leaves. The forces equal
 * one process's within the accuracy asked for (not bit for bit: the trees
 * differ). With the direct and reference methods every body reaches every
 * rank: the sums of one process to rounding. theta and order auto are
 * chosen by the planner over the ranks (tfmm_config.measure; one choice,
 * the same on every rank, which tfmm_solver_choice reads and a
 * checkpoint keeps); the error is measured at a sample of every rank's
 * bodies, the same figures on every rank (tfmm_stats.error; the worst
 * body is its index in rank order: rank 0's bodies, then rank 1's).
 *
 * A solver on the GPU uses GPU cfg.gpu_id + (the rank's index among the
 * ranks of its host) modulo the GPUs it sees: one GPU per rank. */

/* Whether this library was built with MPI: 1 or 0. */
TFMM_API int tfmm_has_mpi(void);

/* The ranks of the solver's communicator, and this one's index; 1 and 0
 * for a solver without one (or NULL). */
TFMM_API int tfmm_solver_ranks(const tfmm_solver *solver);
TFMM_API int tfmm_solver_rank(const tfmm_solver *solver);

/* Where the last evaluation of a solver with a communicator spent its time
 * and what it moved, on this rank. */
typedef struct tfmm_dist_stats {
  size_t bodies;      /* bodies this rank gave */
  size_t owned;       /* bodies in this rank's key range (evaluated here) */
  size_t ghosts;      /* bodies received from other ranks (sources only) */
  size_t let_cells;   /* multipoles received from other ranks */
  size_t sent_bodies; /* bodies this rank sent as others' sources */
  size_t sent_cells;  /* multipoles this rank sent */
  double imbalance;   /* the slowest rank's local time over the mean */
  double time_decompose, time_let, time_local, time_remote, time_exchange,
      time_total; /* seconds, each stage until every rank is through it:
                     the bounds, the key split and the bodies sent to their
                     owners; the octree, its multipoles and the locally
                     essential trees built and exchanged; this rank's
                     solver; the received multipoles; the forces sent back;
                     the whole call */
} tfmm_dist_stats;

/* This rank's statistics of the last evaluation (zeros before the first
 * and for a solver without a communicator); NULL for NULL. */
TFMM_API const tfmm_dist_stats *tfmm_solver_dist_stats(const tfmm_solver *s);

/* The calls that take a communicator are declared when mpi.h is included
 * before this header (they exist in a library built with MPI). */
#if defined(MPI_VERSION)
/* tfmm_solver_create with a communicator (duplicated: the solver's
 * messages never meet the caller's). Collective; destroy it on every rank
 * too (tfmm_solver_destroy frees the duplicate). tfmm_solver_compute and
 * tfmm_solver_compute_active are then collective over comm: n may be 0 on
 * a rank (pos, mass, acc may then be NULL). tfmm_solver_compute_device and
 * _active_device are refused (TFMM_ERR_UNSUPPORTED); _reference_at is
 * this rank's alone (not collective), on the bodies it is given. */
TFMM_API tfmm_status tfmm_solver_create_mpi(tfmm_solver **out,
                                            const tfmm_config *cfg,
                                            MPI_Comm comm);

/* tfmm_sim_create and tfmm_sim_restore over a communicator: each rank gives
 * its part of the bodies (n >= 0; ids should be unique over all ranks, and
 * NULL means rank-local 1..n, so give them). The state of each rank lives on
 * its host (the solver may run on a GPU). Every sim call is then
 * collective. The sim's step, time, bins and diagnostics are those of all
 * bodies (diagnostics and the step criterion summed over the ranks); its
 * count (tfmm_sim_count) and state (tfmm_sim_save) are this rank's bodies.
 * At every synchronisation point the bodies migrate, with their whole state,
 * to the rank whose key range holds them, so a rank's bodies change over a
 * run: tell them by their ids. A state saved over k ranks restores over any
 * number: give each rank any part of it (the scalars are every rank's).
 * tfmm_sim_stats: updates and short_steps count every rank's bodies, the
 * times are this rank's. */
TFMM_API tfmm_status tfmm_sim_create_mpi(tfmm_sim **out,
                                         const tfmm_sim_config *cfg,
                                         MPI_Comm comm, size_t n,
                                         const double *pos, const double *vel,
                                         const double *mass,
                                         const uint64_t *ids);
TFMM_API tfmm_status tfmm_sim_restore_mpi(tfmm_sim **out,
                                          const tfmm_sim_config *cfg,
                                          MPI_Comm comm,
                                          const tfmm_sim_state *state);
#endif

/* ---- Snapshot files (src/io/, docs/formats.md) ----
 *
 * Reading bodies from the files N-body codes write, and writing tilefmm's
 * own snapshots:
 *   HDF5     the GADGET/SWIFT layout (GADGET-3/4, SWIFT, tilefmm; read by
 *            swiftsimio, yt, pynbody, h5py): read and written. Needs a
 *            library built with HDF5 (tfmm_has_hdf5), else
 *            TFMM_ERR_UNSUPPORTED;
 *   GADGET-2 binary snapshots, SnapFormat 1 and 2, either byte order, in
 *            one file or several (BASE.0, BASE.1, ...): read;
 *   Tipsy    binary files (Tipsy, PKDGRAV, ChaNGa), either byte order:
 *            read.
 * Particle types are GADGET's: 0 gas, 1 dark matter, 4 stars, 5 black
 * holes (Tipsy's gas, dark and star particles are 0, 1 and 4). tilefmm
 * computes gravity alone: by default a file must hold one type, not gas;
 * several types, or gas, are read when tfmm_read_options.types names them,
 * concatenated in type order, never merged unasked.
 *
 * These calls print nothing: a failure returns a status other than
 * TFMM_OK (TFMM_ERR_FILE for a file that cannot be read or written or
 * holds what it must not, TFMM_ERR_NO_MEMORY, TFMM_ERR_INVALID_ARGUMENT
 * for bodies that cannot be written) and writes into message (size bytes,
 * NUL-terminated, cut to fit; message may be NULL) why, naming the file
 * and what is wrong in it: the dataset or attribute, the block and byte
 * offset, the body's index and ID. Several causes are separated by '\n'.
 * Safe to call from several threads on different files, except that HDF5
 * itself (most builds) is not thread-safe: one HDF5 call at a time. */

/* The formats of snapshot files. */
typedef enum tfmm_format {
  TFMM_FORMAT_UNKNOWN = 0, /* none of these (a text file), or unreadable */
  TFMM_FORMAT_HDF5 = 1,    /* HDF5, the GADGET/SWIFT layout */
  TFMM_FORMAT_GADGET2 = 2, /* GADGET-2 binary, SnapFormat 1 or 2 */
  TFMM_FORMAT_TIPSY = 3    /* Tipsy binary */
} tfmm_format;

/* Where the units of a snapshot read came from. */
typedef enum tfmm_units_source {
  TFMM_UNITS_NONE = 0,   /* the file has none (Tipsy, GADGET-2, ...) */
  TFMM_UNITS_NBODY = 1,  /* tilefmm's N-body units (Header UnitSystem) */
  TFMM_UNITS_SWIFT = 2,  /* SWIFT's /Units group (SWIFT, tilefmm) */
  TFMM_UNITS_GADGET4 = 3 /* GADGET-4's UnitLength_in_cm, UnitMass_in_g and
                            UnitVelocity_in_cm_per_s (/Header or
                            /Parameters) */
} tfmm_units_source;

/* A unit system, as SWIFT's InternalUnitSystem gives it. mass 0 means
 * N-body units (G = 1, no physical meaning). The time unit is length /
 * velocity. */
typedef struct tfmm_unit_system {
  double mass;        /* grams; 0: N-body units */
  double length;      /* centimetres */
  double velocity;    /* centimetres per second */
  double current;     /* amperes (SWIFT's U_I; gravity does not use it);
                         1 when unset */
  double temperature; /* kelvins (SWIFT's U_T); 1 when unset */
} tfmm_unit_system;

/* A named text value (a run's parameter, a checkpoint's state). Numbers
 * are written as text that reads back to the same bits. */
typedef struct tfmm_attr {
  char *name;  /* "Gravity:theta"; non-empty, distinct within a group */
  char *value; /* "0.5" */
} tfmm_attr;

/* The bodies of a snapshot and what goes with them. The arrays are the
 * caller's when writing (read only); when reading, the library allocates
 * them and tfmm_snapshot_free releases them. Vectors are x0 y0 z0 x1 ... */
typedef struct tfmm_snapshot {
  size_t n;          /* bodies: 1 to 2^32 - 1 to write (NumPart_ThisFile is
                        uint32) */
  double time;       /* the simulation time */
  double *pos;       /* 3n coordinates, finite */
  double *vel;       /* 3n velocities, finite; zeros on read when the file has
                        none */
  double *mass;      /* n masses, each > 0 (finite) */
  double *acc;       /* 3n accelerations, or NULL: not written; NULL on read
                        unless every type read holds them (HDF5 only) */
  double *pot;       /* n potentials per unit mass, or NULL (as acc) */
  uint64_t *ids;     /* n IDs; on read 1..n (in file order) when the file
                        has none (Tipsy, GADGET-2 format 2 without block ID) */
  signed char *bins; /* n time bins of individual steps (PartType1/TimeBins,
                        int8), or NULL: not written; NULL on read when
                        absent */
  tfmm_attr *params; /* nparams entries of /Parameters (HDF5) */
  size_t nparams;
  tfmm_attr *state; /* nstate entries of /RunState (HDF5; a checkpoint's);
                       nstate 0: no such group */
  size_t nstate;
  tfmm_unit_system units; /* the unit system: on write, mass 0 writes N-body
                       units (1 g, 1 cm, 1 cm/s marked "N-body" in Header
                       UnitSystem); on read, the file's (zeros when it has
                       none or is in N-body units) */
  tfmm_units_source units_source; /* on read: where units came from */
  double G;           /* on write: newton_G of /PhysicalConstants, 0: not
                         written; on read: 0 */
  tfmm_format format; /* on read: the file's format */
  char *note;         /* on read, when tfmm_read_options.types is not
                         TFMM_TYPES_DEFAULT: "PATH: read type 1 (dark matter):
                         N as gravitating bodies" (the types and counts read),
                         also after a failure past the choice; else NULL */
  char **files;       /* on read: the nfiles files read (a GADGET-2 snapshot in
                         several files: every part), so that a caller can keep
                         its outputs from replacing them */
  size_t nfiles;
} tfmm_snapshot;

/* The optional datasets of a snapshot for readers (tfmm_snapshot_output;
 * Coordinates, Masses and ParticleIDs are always written). */
#define TFMM_SNAPSHOT_VELOCITIES 1u
#define TFMM_SNAPSHOT_ACCELERATIONS 2u
#define TFMM_SNAPSHOT_POTENTIALS 4u
#define TFMM_SNAPSHOT_ALL 7u

/* How a snapshot for readers is written. Without one (NULL), a
 * checkpoint's: every dataset given, double precision, uncompressed,
 * coordinates unshifted, so that a restart reads the same bits. */
typedef struct tfmm_snapshot_output {
  unsigned fields; /* TFMM_SNAPSHOT_* of the optional datasets written */
  int single;      /* 1: floating-point datasets as float32 */
  int compression; /* gzip level 0 (none) to 9, with HDF5's shuffle */
} tfmm_snapshot_output;

/* tfmm_read_options.types: bit k reads PartType<k>, or one of these. */
#define TFMM_TYPES_DEFAULT 0      /* one type, not gas (else refused) */
#define TFMM_TYPES_ALL UINT64_MAX /* every type present */

/* How a snapshot is read; zeros (or NULL) are the defaults. */
typedef struct tfmm_read_options {
  tfmm_format format; /* TFMM_FORMAT_UNKNOWN (default): told from the
                         file's first bytes (tfmm_snapshot_probe) */
  uint64_t types;     /* the particle types read; default
                         TFMM_TYPES_DEFAULT. Bits of types the file does
                         not hold are refused (but in TFMM_TYPES_ALL) */
  int attributes;     /* HDF5: 1 also reads /Parameters and /RunState
                         (numbers turned into text); 0 (default) skips
                         them, so that a damaged group unread cannot stop
                         the read */
  const char *flag;   /* the caller's name for its choice of types (the
                         CLI's "--types"), named in messages; NULL
                         (default): the messages say how to choose */
} tfmm_read_options;

/* Whether this library was built with HDF5: 1 or 0. */
TFMM_API int tfmm_has_hdf5(void);

/* The format of the file path, told by its first bytes whatever its name:
 * the HDF5 signature (at offset 0 or after a user block of 512, 1024, ...
 * bytes), a GADGET-2 header record, a Tipsy header. A GADGET-2 snapshot in
 * several files may be named by its BASE (no file BASE, but BASE.0).
 * TFMM_FORMAT_UNKNOWN when it is none of them or cannot be read.
 * Pipes: a path that names anything but a regular file (a pipe, a FIFO,
 * /dev/stdin on a pipe, a terminal, a device) is not opened at all and is
 * TFMM_FORMAT_UNKNOWN, so that no byte of it is consumed: the caller can
 * still read it once, from its first byte, as text (the CLI reads a text
 * body file from a pipe so). /dev/stdin redirected from a regular file
 * ('< FILE') is that file, and is probed as one. */
TFMM_API tfmm_format tfmm_snapshot_probe(const char *path);

/* Reads the snapshot path into out (zeroed first; release it with
 * tfmm_snapshot_free, also after a failure). options may be NULL. Every
 * body's coordinates, velocity and mass must be finite and its mass > 0;
 * a failure names the file and the body (its index and ID) or the part
 * of the file at fault.
 * HDF5: masses from Masses, shaped (n) or (n, 1), else MassTable;
 * Coordinates and Velocities float or double, ParticleIDs any integer
 * type (a negative one refused); Header Shift is taken off the
 * coordinates; units from /Units or GADGET-4's keys; multi-file snapshots,
 * damaged chunks (Fletcher-32) and shapes that disagree with
 * NumPart_ThisFile are refused.
 * GADGET-2: positions, velocities (as stored: sqrt(a) dx/dt), masses (block
 * MASS or massarr), IDs; a cosmological snapshot (redshift != 0) is
 * refused; markers that do not frame their records, truncated records and
 * blocks that disagree with the header are named with their byte offset.
 * Tipsy: positions, velocities, masses; IDs are places in the file; a size
 * that does not match the header (truncated, or extra bytes) is refused.
 * Pipes: every format is read by seeking in the file, and told by a first
 * look before it is read, which a pipe does not allow: a path that names
 * a pipe, a FIFO, /dev/stdin on a pipe or a device is refused before a
 * byte is read (TFMM_ERR_FILE, "PATH: not a regular file (a pipe or a
 * device): a snapshot is read by seeking in it, which a pipe does not
 * allow; save it to a file and name that file"); a directory is refused
 * as such. /dev/stdin redirected from a regular file reads as that file.
 * Attributes (options->attributes, HDF5): each of /Parameters and
 * /RunState must be one fixed-length string (at most 64 KiB) or at most
 * 4096 numbers, at most 4096 of them a group, checked by declared type
 * and size before any value is read; a variable-length string is refused
 * unread ("is a variable-length string: refused unread"): its text lives
 * in HDF5's global heap, which has no checksum. A checkpoint's /RunState
 * carries ParametersChecksum ("fnv1a64:" and 16 hex digits: FNV-1a, 64
 * bits, over the names and values of /Parameters and /RunState as
 * written); a file whose groups no longer sum to it (a parameter edited
 * since, or damaged) is refused, "checkpoint parameters changed since it
 * was written", so that a restart never trusts an edited setting. The
 * attribute itself is not among out->state; a file without it (an older
 * tilefmm's) is read unchecked. libhdf5 trusts the metadata it reads, and
 * files in HDF5's earliest format (h5py's default) have no checksum on
 * it: a damaged one can crash or hang the calling process, which this
 * library (it never forks) cannot prevent. Read untrusted HDF5 files in a
 * child process, as the CLI (apps/isolated_read.c) and the Python package
 * (tilefmm.read) do. */
TFMM_API tfmm_status tfmm_snapshot_read(const char *path,
                                        const tfmm_read_options *options,
                                        tfmm_snapshot *out, char *message,
                                        size_t size);

/* TFMM_OK when s can be written: 1 <= n <= UINT32_MAX; pos, vel, mass and
 * ids given; every body finite with mass > 0 (else the message names the
 * body: "PATH: body I (ParticleID ID) has a non-finite coordinate");
 * parameter and state names non-empty and distinct. path is named in the
 * message. TFMM_ERR_INVALID_ARGUMENT otherwise. */
TFMM_API tfmm_status tfmm_snapshot_check(const char *path,
                                         const tfmm_snapshot *s, char *message,
                                         size_t size);

/* Writes s to path in the HDF5 layout of tilefmm run (docs/formats.md):
 * /Header as SWIFT writes it (with GADGET's keys and GADGET-4's unit keys),
 * /PartType1 (every body is of type 1) with SWIFT's unit attributes on
 * each dataset, /Units and SWIFT's other groups (what swiftsimio, yt and
 * pynbody look for), /Parameters, and /RunState when nstate > 0 (every
 * value a fixed-length string; /RunState ends with ParametersChecksum,
 * the FNV-1a sum tfmm_snapshot_read checks: an entry of that name in s is
 * not written, the writer's own takes its place). acc, pot and bins are
 * written when not NULL (and output, if any, asks for them).
 * With an output, the coordinates are stored shifted by BoxSize / 2 into
 * [0, BoxSize) (BoxSize: a little over 2 max |coordinate|), as SWIFT and
 * yt want them, and Header Shift says by how much (tfmm_snapshot_read
 * takes it off, to an ulp of BoxSize); without, they are exact. Datasets
 * are chunked with Fletcher-32 checksums, in the HDF5 1.8 format. The file
 * is written to a temporary beside path (".NAME.tmp-XXXXXX"), synced and
 * renamed over path: a failure leaves an existing path untouched. */
TFMM_API tfmm_status tfmm_snapshot_write(const char *path,
                                         const tfmm_snapshot *s,
                                         const tfmm_snapshot_output *output,
                                         char *message, size_t size);

/* tfmm_snapshot_write into the file named file (created, or truncated),
 * in place, naming path in messages: for a caller that makes, syncs and
 * renames its own temporary (the CLI's atomic outputs). */
TFMM_API tfmm_status tfmm_snapshot_write_file(
    const char *path, const char *file, const tfmm_snapshot *s,
    const tfmm_snapshot_output *output, char *message, size_t size);

/* Releases what tfmm_snapshot_read allocated and zeroes s. */
TFMM_API void tfmm_snapshot_free(tfmm_snapshot *s);

#ifdef __cplusplus
}
#endif

#endif /* TILEFMM_H */
