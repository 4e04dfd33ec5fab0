# Included by tests/CMakeLists.txt (its directory and variables): the ScaLAPACK and StarPU peers' tests.

# The ScaLAPACK peer under mpirun on 2 ranks: checked factorizations in both
# precisions, and a grid that does not match the rank count, which must exit 2
# naming --grid rather than hang.
if(TARGET scalapack_peer)
  set(mpirun ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe -np 2)
  set(peer_time "time=[0-9.]+s gflops=[0-9.]+")
  # Exit 0 and the peer's whole result line, ending in " ok" (its status
  # too: a line alone would pass a run that failed after printing); LU's line
  # also carries its growth factor.
  foreach(algo ${TESSERA_ALGOS})
    foreach(precision d s)
      string(JOIN "|" cmd ${mpirun} $<TARGET_FILE:scalapack_peer> --algo ${algo} --precision ${precision} --n 600 --nb 64
             --grid 1x2 --check)
      add_test(NAME scalapack_peer_${algo}_${precision}_check
               COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                       "-DEXPECT_LINE=scalapack ${algo} ${precision} n=600 nb=64 grid=1x2 ${peer_time} residual=[0-9.e+-]+( growth=[0-9.e+-]+)? ok"
                       -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
      set_tests_properties(scalapack_peer_${algo}_${precision}_check PROPERTIES LABELS mpi TIMEOUT 120)
    endforeach()
  endforeach()
  # LU (PDGETRF / PSGETRF) on both 2-rank grids in both precisions: exit 0 and
  # the line with the backward error ||P A - L U||_1 / (n ||A||_1 eps) below 30
  # (computed on distributed copies: PDLAPIV, PDTRMM, PDGEADD, PDLANGE) and the
  # growth factor max|U| / max|A|.
  foreach(grid 1x2 2x1)
    foreach(precision d s)
      string(JOIN "|" cmd ${mpirun} $<TARGET_FILE:scalapack_peer> --algo lu --precision ${precision} --n 600 --nb 64
             --grid ${grid} --check)
      set(name scalapack_peer_lu_${precision}_${grid}_check)
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                                    "-DEXPECT_LINE=scalapack lu ${precision} n=600 nb=64 grid=${grid} ${peer_time} residual=[0-9.e+-]+ growth=[0-9.e+-]+ ok"
                                    -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
      set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
    endforeach()
  endforeach()
  # A matrix whose column n/2+1 = 301 is zero (--matrix zerocol): PDGETRF meets
  # an exactly zero pivot there; exit 3 and one message (rank 0's) naming it.
  string(JOIN "|" cmd ${mpirun} $<TARGET_FILE:scalapack_peer> --algo lu --matrix zerocol --n 600 --nb 64 --grid 2x1
         --check)
  add_test(NAME scalapack_peer_lu_zero_pivot
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=3 -DEXPECT_COUNT=1
                   "-DEXPECT_REGEX=error: matrix singular: the pivot U\\(301,301\\) is exactly zero \\(PDGETRF failed at global column 301, 1-based\\)"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  set_tests_properties(scalapack_peer_lu_zero_pivot PROPERTIES LABELS mpi TIMEOUT 120)
  string(JOIN "|" bad_grid ${mpirun} $<TARGET_FILE:scalapack_peer> --algo cholesky --n 600 --nb 64 --grid 2x2)
  add_test(NAME scalapack_peer_bad_grid
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${bad_grid}" -DEXPECT_RC=2 "-DEXPECT_REGEX=error: --grid 2x2"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  set_tests_properties(scalapack_peer_bad_grid PROPERTIES LABELS mpi TIMEOUT 120)
  # A share no rank can allocate: each names itself and the job ends with 4
  # (an uncaught std::bad_alloc aborted with a backtrace); a --json that is
  # a directory is refused before the factorization.
  string(JOIN "|" huge ${mpirun} $<TARGET_FILE:scalapack_peer> --algo cholesky --n 3000000 --nb 64 --grid 1x2)
  add_test(NAME scalapack_peer_out_of_memory
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${huge}" -DEXPECT_RC=4
                   "-DEXPECT_REGEX=error: rank [01]: out of memory for its share .* \\(--n 3000000\\)"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  string(JOIN "|" json_dir ${mpirun} $<TARGET_FILE:scalapack_peer> --algo cholesky --n 600 --nb 64 --grid 1x2 --json
         ${CMAKE_CURRENT_BINARY_DIR})
  add_test(NAME scalapack_peer_json_directory
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${json_dir}" -DEXPECT_RC=2 -DEXPECT_COUNT=1
                   "-DEXPECT_REGEX=error: --json .*: is a directory" -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  set_tests_properties(scalapack_peer_out_of_memory scalapack_peer_json_directory PROPERTIES LABELS mpi TIMEOUT 120)
  # The peer's numbers: GFlop/s from each algorithm's flop count, the slowest rank's time, LU's growth factor,
  # which is tessera's for the same kind and seed (one matrix).
  add_test(NAME scalapack_peer_numbers COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scalapack_peer_numbers.sh
                                               ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:scalapack_peer> $<TARGET_FILE:tessera>)
  set_tests_properties(scalapack_peer_numbers PROPERTIES LABELS mpi TIMEOUT 120)
endif()

# The StarPU peer (experiments/starpu_peer.cpp): tessera's Cholesky tasks on
# StarPU's runtime, checked by tessera's residual in both precisions, on tiles
# that do not divide N, under three scheduling policies, with and without
# priorities (a lost dependency would let a GEMM read a tile before its TRSM
# and fail the check), each submitting the 286 tasks of tessera's graph
# (11 POTF2', 55 TRSM, 55 diagonal updates, 165 GEMM); a lower triangle that
# is not positive definite exits 3 naming the column; bad options, a matrix no
# memory holds and a --json that is a directory exit with one line naming
# them. StarPU keeps its bus calibration in a folder of each test's own
# (STARPU_HOME), not in $HOME.
if(TARGET starpu_peer)
  set(starpu_line "tasks=286 time=[0-9.]+s gflops=[0-9.]+ residual=[0-9.e+-]+ passed")
  # The default spd matrix is so diagonally dominant that a single-precision
  # check passes even with every diagonal update left out (tried); illcond's
  # (kappa 1e5 in single) fails it.
  foreach(case "d;lws;;spd" "s;lws;;illcond" "d;prio;;illcond" "d;prio;--no-prio;illcond" "s;eager;;illcond")
    list(GET case 0 precision)
    list(GET case 1 sched)
    list(GET case 2 prio)
    list(GET case 3 matrix)
    set(prio_word on)
    if(prio)
      set(prio_word off)
    endif()
    string(JOIN "|" cmd $<TARGET_FILE:starpu_peer> --n 1000 --nb 96 --threads 2 --precision ${precision} --sched ${sched}
           ${prio} --matrix ${matrix} --check)
    add_test(NAME starpu_peer_${precision}_${sched}${prio}_check
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                     "-DEXPECT_LINE=starpu cholesky ${precision} n=1000 nb=96 threads=2 sched=${sched} prio=${prio_word} ${starpu_line}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
    set_tests_properties(starpu_peer_${precision}_${sched}${prio}_check PROPERTIES LABELS peers TIMEOUT 120
                         ENVIRONMENT STARPU_HOME=${CMAKE_CURRENT_BINARY_DIR}/starpu_home/${precision}_${sched}${prio})
  endforeach()
  foreach(case "general;3;error: the matrix is not positive definite \\(column [0-9]+\\)"
               "nb0;2;error: --nb 0: must be >= 1"
               "sched;2;error: --sched fifo2: not a StarPU scheduling policy \\(StarPU 1\\.[0-9]+ has: .*lws"
               "threads;2;error: --threads 99: this StarPU \\([0-9.]+\\) runs at most [0-9]+ CPU workers per process"
               "matrix;2;error: --matrix rankdef: must be spd, graded, illcond or general"
               "huge;4;error: out of memory for the 3000000 x 3000000 matrix \\(7.2e\\+04 GB, --n 3000000\\)"
               "json;2;error: --json .*: is a directory")
    list(GET case 0 name)
    list(GET case 1 rc)
    list(GET case 2 regex)
    set(args --n 300 --nb 64)
    if(name STREQUAL "general")
      list(APPEND args --matrix general)
    elseif(name STREQUAL "nb0")
      set(args --n 300 --nb 0)
    elseif(name STREQUAL "sched")
      list(APPEND args --sched fifo2)
    elseif(name STREQUAL "threads")
      list(APPEND args --threads 99)
    elseif(name STREQUAL "matrix")
      list(APPEND args --matrix rankdef)
    elseif(name STREQUAL "huge")
      set(args --n 3000000 --nb 3000000)
    else()
      list(APPEND args --json ${CMAKE_CURRENT_BINARY_DIR})
    endif()
    string(JOIN "|" cmd $<TARGET_FILE:starpu_peer> ${args})
    add_test(NAME starpu_peer_refuses_${name}
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=${rc} -DEXPECT_COUNT=1 "-DEXPECT_REGEX=${regex}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
    set_tests_properties(starpu_peer_refuses_${name} PROPERTIES LABELS peers TIMEOUT 120
                         ENVIRONMENT STARPU_HOME=${CMAKE_CURRENT_BINARY_DIR}/starpu_home/refuses_${name})
  endforeach()
  # The peer's numbers: GFlop/s from Cholesky's flop count, the global column
  # of a breakdown at every tile width (and, with StarPU-MPI, the lowest any
  # rank met and the slowest rank's time), --threads up to StarPU's most
  # workers, --sched over STARPU_SCHED.
  if(STARPUMPI_FOUND)
    add_test(NAME starpu_peer_numbers COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/starpu_peer_numbers.sh
                                              $<TARGET_FILE:starpu_peer> ${MPIEXEC_EXECUTABLE})
    set_tests_properties(starpu_peer_numbers PROPERTIES LABELS "peers;mpi" TIMEOUT 120)
  else()
    add_test(NAME starpu_peer_numbers COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/starpu_peer_numbers.sh
                                              $<TARGET_FILE:starpu_peer>)
    set_tests_properties(starpu_peer_numbers PROPERTIES LABELS peers TIMEOUT 120)
  endif()
  # StarPU-MPI on tessera's placement (--grid): checked on both 2-rank grids,
  # the factor gathered on rank 0; a grid that does not match the rank count
  # exits 2 with rank 0's message alone.
  if(STARPUMPI_FOUND)
    set(mpirun2 ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe -np 2)
    foreach(case "1x2;d;spd" "2x1;s;illcond")
      list(GET case 0 grid)
      list(GET case 1 precision)
      list(GET case 2 matrix)
      string(JOIN "|" cmd ${mpirun2} $<TARGET_FILE:starpu_peer> --grid ${grid} --n 1000 --nb 96 --threads 1
             --precision ${precision} --matrix ${matrix} --check)
      add_test(NAME starpu_peer_mpi_${grid}_${precision}_check
               COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                       "-DEXPECT_LINE=starpu cholesky ${precision} n=1000 nb=96 threads=1 grid=${grid} sched=lws prio=on ${starpu_line}"
                       -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
      set_tests_properties(starpu_peer_mpi_${grid}_${precision}_check PROPERTIES LABELS "peers;mpi" TIMEOUT 120
                           ENVIRONMENT STARPU_HOME=${CMAKE_CURRENT_BINARY_DIR}/starpu_home/mpi_${grid})
    endforeach()
    string(JOIN "|" cmd ${mpirun2} $<TARGET_FILE:starpu_peer> --grid 2x2 --n 300 --nb 64)
    add_test(NAME starpu_peer_mpi_bad_grid
             COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=2 -DEXPECT_COUNT=1
                     "-DEXPECT_REGEX=error: --grid 2x2 needs 4 ranks, but 2 were started \\(mpirun -np\\)"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
    set_tests_properties(starpu_peer_mpi_bad_grid PROPERTIES LABELS "peers;mpi" TIMEOUT 120
                         ENVIRONMENT STARPU_HOME=${CMAKE_CURRENT_BINARY_DIR}/starpu_home/mpi_bad_grid)
  endif()
endif()
