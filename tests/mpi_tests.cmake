# Included by tests/CMakeLists.txt (its directory and variables): tessera under mpirun.

# tessera itself under mpirun, one process per node of the grid (issue points
# 4, 5, 7, 9). Checked Cholesky and QR in both precisions on every grid of up
# to 4 nodes (np = Pr*Pc, oversubscribed on small machines): exit 0 and rank
# 0's summary line with the grid, its message counts and ` ok`. The 2x2 runs
# use two-level tiles (--s 2); QR on 2x1 and 1x3 factors a tall 700x600 matrix.
if(TESSERA_HAVE_MPI)
  set(mpirun_base ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe)
  set(expect_exit ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  foreach(grid 1x1 1x2 2x1 2x2 1x3 3x1)
    string(REPLACE "x" ";" pr_pc ${grid})
    list(GET pr_pc 0 pr)
    list(GET pr_pc 1 pc)
    math(EXPR np "${pr} * ${pc}")
    foreach(algo ${TESSERA_ALGOS})
      foreach(precision d s)
        set(shape --n 600 --B 64)
        set(m 600)
        set(s 1)
        if(grid STREQUAL "2x2")
          list(APPEND shape --s 2)
          set(s 2)
        endif()
        if(algo STREQUAL "qr" AND (grid STREQUAL "2x1" OR grid STREQUAL "1x3"))
          list(APPEND shape --m 700)
          set(m 700)
        endif()
        check_matrix(matrix ${algo} ${precision})
        string(JOIN "|" cmd ${mpirun_base} -np ${np} $<TARGET_FILE:tessera> run --algo ${algo} ${shape}
               --precision ${precision} --grid ${grid} ${matrix} --check)
        set(line "${algo} +tile ${precision} ${m}x600 B=64 s=${s} .* grid=${grid} msgs_max=[0-9]+ words_max=[0-9]+ .* ok")
        if(grid STREQUAL "1x1")
          # A job of one rank runs a one-node run without MPI (MpiNetwork::mpirun_ranks): no grid, no messages.
          set(line "${algo} +tile ${precision} ${m}x600 B=64 s=${s} .* threads=[0-9]+ backend=native .* ok")
        endif()
        set(name tessera_mpi_${algo}_${precision}_${grid})
        add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0 "-DEXPECT_LINE=${line}"
                                      -P ${expect_exit})
        set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
      endforeach()
    endforeach()
  endforeach()

  # 2x3: a panel tile has up to Pr + Pc - 2 = 3 readers on other ranks, so
  # the binomial broadcast forwards (the third receives it from the first,
  # runtime/protocol_sink.hpp), which 2-node-per-dimension grids never do;
  # --broadcast flat on the same grid for comparison. Checked.
  foreach(algo ${TESSERA_ALGOS})
    foreach(broadcast binomial flat)
      string(JOIN "|" cmd ${mpirun_base} -np 6 $<TARGET_FILE:tessera> run --algo ${algo} --n 600 --B 64
             --grid 2x3 --broadcast ${broadcast} --check)
      set(name tessera_mpi_${algo}_2x3_${broadcast})
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                                    "-DEXPECT_LINE=${algo} +tile d 600x600 B=64 s=1 .* grid=2x3 msgs_max=[0-9]+ .* ok"
                                    -P ${expect_exit})
      set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
    endforeach()
  endforeach()

  # With one emulated GPU per node on a 1x2 grid: checked, with both the
  # grid's message counts and the GPU fields in rank 0's summary line.
  foreach(algo ${TESSERA_ALGOS})
    foreach(precision d s)
      check_matrix(matrix ${algo} ${precision})
      string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo ${algo} --precision ${precision} ${gpu_shape}
             --threads 1 --grid 1x2 --gpus 1 ${matrix} --check)
      set(line "${algo} +tile ${precision} 600x600 B=120 s=3 b=24 tiles=5x15 threads=1 grid=1x2 msgs_max=[0-9]+ "
               "words_max=[0-9]+ gpus=1 imbalance=[0-9.]+ gpu_peak_MiB=[0-9.]+ backend=native .* ok")
      string(JOIN "" line ${line})
      set(name tessera_mpi_gpu_${algo}_${precision}_1x2)
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0 "-DEXPECT_LINE=${line}" -P ${expect_exit})
      set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
    endforeach()
  endforeach()

  # QR with virtual tiles (000 App. A.2.2, --v): 3 tile rows per virtual tile
  # on 2x1 and 2x2 (a tall 700x600 matrix, 11 tile rows), checked, with and
  # without an emulated GPU per node; the summary line names the v it used.
  foreach(gpus 0 1)
    foreach(grid 2x1 2x2)
      string(REPLACE "x" ";" pr_pc ${grid})
      list(GET pr_pc 0 pr)
      list(GET pr_pc 1 pc)
      math(EXPR np "${pr} * ${pc}")
      string(JOIN "|" cmd ${mpirun_base} -np ${np} $<TARGET_FILE:tessera> run --algo qr --m 700 --n 600 --B 64 --s 2
             --b 16 --grid ${grid} --v 3 --gpus ${gpus} --check)
      set(name tessera_mpi_qr_virtual_tiles_${grid}_G${gpus})
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                    "-DEXPECT_LINE=qr +tile d 700x600 B=64 s=2 b=16 .* grid=${grid} msgs_max=[0-9]+ words_max=[0-9]+ v=3 .* ok"
                    -P ${expect_exit})
      set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
    endforeach()
  endforeach()

  # QR's binary reduction tree under mpirun: 4 ranks on 2x2 and 4x1, one
  # emulated GPU per node on 4x1, checked.
  foreach(c "2x2@0" "4x1@1")
    string(REPLACE "@" ";" parts "${c}")
    list(GET parts 0 grid)
    list(GET parts 1 gpus)
    string(JOIN "|" cmd ${mpirun_base} -np 4 $<TARGET_FILE:tessera> run --algo qr --m 900 --n 500 --B 64 --s 2 --b 16
           --grid ${grid} --v 2 --gpus ${gpus} --qr-tree binary --check)
    set(name tessera_mpi_qr_binary_tree_${grid}_G${gpus})
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=0
                  "-DEXPECT_LINE=qr +tile d 900x500 B=64 s=2 b=16 .* grid=${grid} .* tree=binary .* ok" -P ${expect_exit})
    set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 120)
  endforeach()

  # A GPU out of memory on one node of a distributed run ends the whole job
  # with exit 4 (the other rank waits for its messages: it must not hang).
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo qr --n 600 --B 120 --threads 1 --grid 1x2
         --gpus 1 --gpu-memory 200000)
  add_test(NAME tessera_mpi_gpu_out_of_memory
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=4
                   "-DEXPECT_REGEX=tessera: error: node [01]: GPU 1 \\(emulated\\): out of memory" -P ${expect_exit})
  set_tests_properties(tessera_mpi_gpu_out_of_memory PROPERTIES LABELS mpi TIMEOUT 60)
  # Host memory exhausted on one rank (rank 1 alone under `ulimit -v`): the job
  # ends with exit 4 within 10 s naming the limit, whether the rank's share or
  # its threads' address space does not fit; with room for both it runs.
  add_test(NAME tessera_mpi_host_memory COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi_host_memory.sh $<TARGET_FILE:tessera>
                                                ${MPIEXEC_EXECUTABLE})
  set_tests_properties(tessera_mpi_host_memory PROPERTIES LABELS mpi TIMEOUT 120)

  # Exit 1 under mpirun: the distributed check finds the factor that
  # --test-fault corrupted on rank 0; every rank exits 1, rank 0 alone reports.
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo qr --n 300 --B 64 --grid 1x2 --check
         --test-fault corrupt-factor)
  add_test(NAME tessera_mpi_check_failed
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=1 -DEXPECT_COUNT=1
                   "-DEXPECT_REGEX=tessera: error: --check failed: residual [0-9.e+]+, orthogonality"
                   "-DEXPECT_LINE=qr +tile d 300x300 .* grid=1x2 .* FAILED" -P ${expect_exit})
  set_tests_properties(tessera_mpi_check_failed PROPERTIES LABELS mpi TIMEOUT 120)
  # ... and no rank ends before node 0 has written that report, even when
  # node 0 is slow to write it.
  add_test(NAME tessera_mpi_report_before_exit COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi_report_before_exit.sh
                                                       $<TARGET_FILE:tessera> ${MPIEXEC_EXECUTABLE})
  set_tests_properties(tessera_mpi_report_before_exit PROPERTIES LABELS mpi TIMEOUT 120)

  # A grid that is not the process count: every rank says so and exits 2
  # rather than hang. A malformed grid: exit 2 naming --grid.
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo cholesky --n 600 --grid 2x2 --check)
  add_test(NAME tessera_mpi_grid_mismatch
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=2 -DEXPECT_COUNT=2
                   "-DEXPECT_REGEX=tessera: error: --grid 2x2 has 4 nodes, but 2 MPI processes run" -P ${expect_exit})
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo cholesky --n 600 --grid 0x2)
  add_test(NAME tessera_mpi_bad_grid
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=2 "-DEXPECT_REGEX=tessera: error: --grid 0x2"
                   -P ${expect_exit})
  set_tests_properties(tessera_mpi_grid_mismatch tessera_mpi_bad_grid PROPERTIES LABELS mpi TIMEOUT 120)
  # --B auto would tune on every rank (each its own child runs, perhaps to
  # other tiles than its peers'): refused under mpirun, naming --tuned.
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo cholesky --n 512 --grid 1x2 --B auto)
  add_test(NAME tessera_mpi_b_auto_refused
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=2
                   "-DEXPECT_REGEX=tessera: error: --B auto under mpirun \\(OMPI_COMM_WORLD_SIZE=2\\) would tune on every rank: .*--tuned FILE"
                   -P ${expect_exit})
  set_tests_properties(tessera_mpi_b_auto_refused PROPERTIES LABELS mpi TIMEOUT 120)
  # Ranks on one host share its memory: each is held to MemAvailable over the
  # ranks mpirun started there (OMPI_COMM_WORLD_LOCAL_SIZE), and a share no
  # host holds is refused naming the split (with no `ulimit -v`, the tighter
  # bound otherwise; mpi_host_memory.sh covers that one).
  string(JOIN "|" cmd ${mpirun_base} -np 2 $<TARGET_FILE:tessera> run --algo cholesky --n 2000000 --grid 1x2)
  add_test(NAME tessera_mpi_memory_split_between_ranks
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${cmd}" -DEXPECT_RC=4
                   "-DEXPECT_REGEX=tessera: error: rank [01]: out of memory: .* of /proc/meminfo, split between the 2 MPI ranks on this host"
                   -P ${expect_exit})
  set_tests_properties(tessera_mpi_memory_split_between_ranks PROPERTIES LABELS mpi TIMEOUT 120)

  # Messages of every length through the OpenMPI network, with the plain-count limit lowered so that the derived
  # datatype of a message above 2^31 - 1 bytes is taken by small ones (tests/mpi_messages.cpp says why).
  add_executable(mpi_messages mpi_messages.cpp)
  target_link_libraries(mpi_messages PRIVATE tessera_core)
  add_test(NAME tessera_mpi_messages_of_every_length
           COMMAND ${mpirun_base} -np 2 $<TARGET_FILE:mpi_messages>)
  set_tests_properties(tessera_mpi_messages_of_every_length PROPERTIES LABELS mpi TIMEOUT 60)
  # Outputs when something fails: JSON before the summary, node 1's trace checked before the run, a failed write
  # leaving the earlier file, unwritable JSON an exit 2 for model comm and the peers (tests/outputs_on_failure.sh).
  if(TARGET starpu_peer)
    set(starpu_for_outputs $<TARGET_FILE:starpu_peer>)
  else()
    set(starpu_for_outputs "")
  endif()
  if(TARGET scalapack_peer)
    add_test(NAME tessera_outputs_on_failure
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/outputs_on_failure.sh $<TARGET_FILE:tessera>
                     ${PROJECT_SOURCE_DIR}/platform/machines/keeneland.json "${starpu_for_outputs}"
                     $<TARGET_FILE:scalapack_peer> ${MPIEXEC_EXECUTABLE})
  else()
    add_test(NAME tessera_outputs_on_failure
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/outputs_on_failure.sh $<TARGET_FILE:tessera>
                     ${PROJECT_SOURCE_DIR}/platform/machines/keeneland.json "${starpu_for_outputs}")
  endif()
  set_tests_properties(tessera_outputs_on_failure PROPERTIES LABELS mpi TIMEOUT 120)
  # Every rank writes its own trace (node k: FILE.nodeK.json); together they
  # hold each kernel of a one-node run once.
  add_test(NAME tessera_mpi_traces
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi_traces.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:tessera>)
  set_tests_properties(tessera_mpi_traces PROPERTIES LABELS mpi TIMEOUT 60)
  # A rank killed (SIGKILL) once the factorization runs (its --progress-file
  # marker): mpirun and every other rank must end within 10 s of the kill,
  # non-zero, mpirun naming the rank and signal 9, and no summary line.
  foreach(rank 0 1)
    add_test(NAME tessera_mpi_rank${rank}_killed
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi_rank_killed.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:tessera> ${rank})
    set_tests_properties(tessera_mpi_rank${rank}_killed PROPERTIES LABELS mpi TIMEOUT 180)
  endforeach()
endif()
