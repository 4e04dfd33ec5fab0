"""Round 9: the faults this session's reviewers found by bug class (numerical failure paths and edge values;
concurrency outside the ThreadSanitizer run), each fixed: a mutant puts each fault back and names the test that now
sees it."""
from mutant_sets.common import *  # noqa: F401,F403 (m, the selections, the paths)

NUM, INPUT, CAL = "base/numerics.hpp", "experiments/input_matrix.cpp", "experiments/calibrate.cpp"
NUMERIC_TESTS = '-R "CheckDetectsErrors|LuCheck"'
BAD_INPUT = '-R "CliBadInput"'

MUTANTS = [
    # --- Numerical failure paths (a reviewer of non-SPD, singular, NaN, extreme and single-precision inputs).
    # The ratio as one product: scale * ||A|| overflows for ||A|| above DBL_MAX / n and a corrupt factor of
    # diag(2^1020) passes with 0. Killed by CheckDetectsErrors.RatioOfNormsAtTheEndsOfTheRange.
    m("scaled_ratio_as_one_product", NUM, "  return resid / anorm / scale / eps;",
      "  return resid / (scale * anorm * eps);", NUMERIC_TESTS),
    # numeric_limits' epsilon (2u) as LAPACK's eps: every ratio halves, THRESH 30 acts as LAPACK's 60. Killed by
    # CheckDetectsErrors.RatiosAreInUnitsOfTheUnitRoundoff and LuCheck.SolveRatioIsTheScaledResidualOfASolve.
    m("eps_is_twice_the_unit_roundoff", NUM, "  return std::numeric_limits<T>::epsilon() / 2;",
      "  return std::numeric_limits<T>::epsilon();", NUMERIC_TESTS),
    # An infinite diagonal entry of a Cholesky factor taken as a pivot. Killed by
    # CheckDetectsErrors.FirstBadCholeskyDiagonal.
    m("cholesky_diagonal_infinity_passes", NUM, "    if (!(d > T(0)) || !std::isfinite(d)) return j + 1;",
      "    if (!(d > T(0))) return j + 1;", NUMERIC_TESTS),
    # The tile kernel trusts POTRF's info: a non-SPD matrix whose elimination overflowed gives NaN factors and
    # exit 0. Killed by CliBadInput.APivotThatOverflowsToNanIsNotPositiveDefinite (tile, emulated GPU, simulated).
    m("potf2p_trusts_potrf_info", "kernels/cpu/tile_kernels.cpp",
      "  if (const long long bad = first_bad_cholesky_diagonal(n, a, lda)) return static_cast<int>(bad);\n", "",
      BAD_INPUT),
    # The same in the LAPACK peer. Killed by the same test's --impl lapack rows.
    m("lapack_peer_trusts_potrf_info", "algorithms/cholesky_factorization.cpp",
      "    return info != 0 ? info : static_cast<int>(first_bad_cholesky_diagonal(n, a, n));", "    return info;",
      BAD_INPUT),
    # A single-precision run takes 1e300 as an infinity. Killed by CliBadInput.AnInputValueOutsideThePrecisionsRange.
    m("single_precision_overflow_taken", INPUT, "  if (std::isinf(t) || (t == T(0) && v != 0))",
      "  if (t == T(0) && v != 0)", BAD_INPUT),
    # strtod's underflow to 0 taken as 0. Killed by the same test (1e-400 in double).
    m("strtod_underflow_taken", "base/matrix_market.cpp", "    if (errno == ERANGE && v == 0)",
      "    if (false && errno == ERANGE && v == 0)", BAD_INPUT),
    # The streamed symmetry check's term symmetric in r and s: every file's sum is its own size, symmetric files
    # refused. Killed by tessera_input_every_backend (sym_1e12_sim_2x2, chol_sim_2x2 of a general file ...).
    m("streamed_symmetry_term_symmetric", INPUT, "sum.add(v * (r[i] * s[j] - s[i] * r[j]));",
      "sum.add(v * (r[i] * s[j] + s[i] * r[j]));", '-R tessera_input_every_backend'),
    # The tolerance against the whole sum of magnitudes, not the terms' (one large entry hid any asymmetry). Killed
    # by tessera_input_every_backend (asym_1e12_sim_2x2: its relative sum is 1; 1e12 x 0.5e-12 lets it pass).
    m("streamed_symmetry_tolerance_scaled_up", INPUT, "  if (sum.relative() > 0.5e-12)",
      "  if (sum.relative() > 0.5e-12 * 1e12 * 4)", '-R tessera_input_every_backend'),

    # --- Concurrency outside the ThreadSanitizer run (a reviewer of the CUDA, MPI and timing threads).
    # The kernel timer's started threads left running when another cannot start (terminate, exit 134). Killed by
    # tessera_thread_limits (calibrate --threads 3 under prlimit --nproc 3 as nobody).
    m("kernel_timer_leaves_threads_running", CAL, "      }));\n  } catch (...) {\n    stop_others();\n    throw;\n  }",
      "      }));\n  } catch (...) {\n    throw;\n  }", '-R tessera_thread_limits'),
    # Every local rank on devices 0..G-1. Killed by CudaOrdinals.EachRankOfAHostTakesDevicesOfItsOwn.
    m("cuda_ranks_share_devices", "experiments/driver.cpp", "  return local_rank * gpus + g - 1;", "  return g - 1;",
      '-R CudaOrdinals'),
    # Too few devices for the host's ranks not refused. Killed by the same test.
    m("cuda_too_few_devices_taken", "experiments/driver.cpp",
      "  if (static_cast<long long>(local_ranks) * gpus > present)", "  if (false)", '-R CudaOrdinals'),
]
