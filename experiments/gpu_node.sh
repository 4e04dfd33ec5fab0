#!/usr/bin/env bash
# One real GPU node, reproducibly (issue 15 point 6).
#
# The GPU machines this project is lent are bare: CUDA's toolkit and driver,
# Python with NumPy, nothing else, and nothing can be installed there. So the
# work is split in two:
#
#   experiments/gpu_node.sh pack [DIR]
#       on the build machine (Debian 12, after ./setup.sh build, CUDA 13 at
#       /usr/local/cuda as on the GPU machine): tessera, its CUDA module, the
#       CUDA tests, the ScaLAPACK peer and bench_kernels, with every shared
#       library they load that is neither CUDA's (taken from the GPU
#       machine's toolkit) nor the C/C++ runtime's, and Open MPI's launcher,
#       plugins and help files, into DIR/gpu_node.tar.xz (DIR default .gpu,
#       which .gitignore ignores). About 25 MB. $TESSERA_BUILD names another
#       build folder than build/.
#
#   experiments/gpu_node.sh run [DIR] [OUT] [STEPS]
#       on the GPU machine, in the repository root: unpacks DIR's archive
#       under /tmp/tessera-gpu (Open MPI's files at their Debian paths, only
#       where nothing is there), records the machine (GPU, driver, CPU,
#       OpenBLAS core), and runs STEPS (comma-separated, default all of
#       tests,sanitizer,check,bench):
#         tests      the CUDA tests (build/tests/tessera_cuda_tests)
#         sanitizer  compute-sanitizer memcheck on small Cholesky, QR and LU
#         check      --check on every factorization with --gpus 1 --device cuda
#         calibrate  the node's machine file: cores.json (tessera calibrate of the
#                    cores) and node.json (its GPU added: calibrate --device cuda;
#                    node-cold.json: the same with the GPU's cache evicted before each call);
#                    precisions $CAL_PRECISIONS, default d; $CAL_GPU_ARGS: more arguments
#                    of the GPU's calibration (say "--sizes 2048,4096,8192 --ib 32,128")
#         kernels    bench_cuda_kernels: every GPU tile kernel at 1024-4096, QR's at
#                    ib 32-256, TFlop/s and the ratio to GEMM's (filter $KERNELS_FILTER)
#         ooc        out of core (issue 15 point 5): Cholesky and QR at N = $OOC_N
#                    (default 65,536) in core, then with --gpu-memory at 2/3 of the
#                    bytes they touch (Cholesky's lower triangle, QR's matrix),
#                    under next-use and lru eviction, and --check out of core at
#                    N = 16,384; OUT/runs.json lists them for experiments/gpu_predict.py
#         bench      experiments/bench_gpu.py: tessera against cuSOLVER, N = 32,768
#                    (rows: $BENCH_ROWS, ';'-separated ALGO:ARGS; default
#                    bench_gpu.py's: the README's table, two narrow-panel LUs,
#                    three LUs with every column on the GPU (--d 0);
#                    precisions $BENCH_PRECISIONS, default d; bench_gpu.py's
#                    --check $BENCH_CHECK, default none: a check at N = 32,768
#                    takes minutes, so the table says it is unchecked, and the
#                    check step checks both sides' configurations at N = 8192)
#         trace      one traced run per row of $TRACE_ROWS (';'-separated ALGO:ARGS, N = $TRACE_N,
#                    default 32,768; default rows: Cholesky d B = 2048 with each task's
#                    kernels waited for, --gpu-kernel-depth 1, so that each task's
#                    interval is its own; a row's own --threads replaces the default),
#                    OUT/trace_I.json and trace_I.run.json, for
#                    analysis/trace_compare.py against its simulation
#         tune       tessera tune on the GPU for $TUNE_ALGOS (default cholesky,qr; QR at
#                    --ib 128), N = $TUNE_N (default 32,768): candidates ranked on
#                    $TUNE_MACHINE (default OUT/node.json, the calibrate step's), the best
#                    run for real on the CUDA device within $TUNE_BUDGET s (default 60);
#                    QR's tuning also gets $TUNE_QR_ARGS (e.g. '--gpu-streams 2
#                    --gpu-qr-panel cholqr'); OUT/tune_ALGO.json
#         mpi        experiments/bench_mpi.py: 2x2 ranks x 4 cores against ScaLAPACK
#                    ($MPI_ALGOS, default qr,cholesky; $MPI_N, default 16,384;
#                    $MPI_THREADS compute threads per rank, default 3; $MPI_TILE_ARGS:
#                    tessera's arguments, ';'-separated sets, one step mpi_I each;
#                    $MPI_MPIRUN_ARGS: mpirun's for both peers, default '--bind-to none';
#                    $MPI_CHECK: bench_mpi.py's --check, default first)
#         starpu     experiments/bench_starpu.py: tessera against its Cholesky on StarPU
#                    (build/starpu_peer, packed when it was built), one process of 4
#                    workers (Debian's StarPU runs at most 4; $STARPU_CONFIGS, N:NB
#                    pairs, default 1920:32,3840:128,7680:320), then with
#                    $STARPU_GRID_CONFIGS set, 2x2 ranks of 3 workers each on StarPU-MPI
#       Logs and JSON go to OUT (default results/gpu_node); a failing step is
#       recorded in OUT/steps.txt and the next one runs. $STEP_FILTER (regex on
#       the step names of OUT/steps.txt) runs a part; $STEP_TIMEOUT (s) bounds
#       each step, $BENCH_TIMEOUT (s, default 150) each benchmark run.
#
# With the lent-machine tool:  run(command="experiments/gpu_node.sh run .gpu $OUT", carry=[".gpu"])
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
dir=${2:-.gpu}

pack() {
  local build=${TESSERA_BUILD:-$here/build} stage
  for f in tessera libtessera_cuda.so tests/tessera_cuda_tests scalapack_peer bench_kernels bench_cuda_kernels; do
    [[ -e $build/$f ]] || { echo "gpu_node.sh pack: $build/$f is missing (run ./setup.sh build first)" >&2; exit 2; }
  done
  stage=$(mktemp -d)
  mkdir -p "$stage/build/tests" "$stage/lib" "$stage/root"
  cp "$build/tessera" "$build/libtessera_cuda.so" "$build/scalapack_peer" "$build/bench_kernels" \
    "$build/bench_cuda_kernels" "$stage/build/"
  cp "$build/tests/tessera_cuda_tests" "$stage/build/tests/"
  # The StarPU peer where it was built (libstarpu-dev): its libraries come with the others below.
  [[ -e $build/starpu_peer ]] && cp "$build/starpu_peer" "$stage/build/"
  # Open MPI 4.1 as Debian lays it out: launcher, daemon, plugins, help
  # texts, PMIx and its plugins. Copied to the same paths there.
  local mpi_paths=(/usr/bin/orterun /usr/bin/orted /usr/lib/x86_64-linux-gnu/openmpi/lib
                   /usr/lib/x86_64-linux-gnu/pmix2/lib /usr/lib/x86_64-linux-gnu/pmix2/share
                   /usr/share/openmpi /etc/openmpi)
  for p in "${mpi_paths[@]}"; do
    mkdir -p "$stage/root$(dirname "$p")"
    cp -a "$p" "$stage/root$p"
  done
  # Every shared library the programs and plugins load, but for the C/C++
  # runtime (the GPU machine's is newer) and CUDA (its own toolkit's).
  local skip='linux-vdso|ld-linux|/libc\.so|/libm\.so|/libpthread|/libdl\.|/librt\.|/libstdc\+\+|/libgcc_s|/usr/local/cuda'
  local objs
  objs=$(find "$stage/build" "$stage/root" -type f \( -name '*.so*' -o -perm -u+x \))
  for o in $objs; do ldd "$o" 2>/dev/null; done | awk '/=> \//{print $3}' | grep -Ev "$skip" | sort -u |
    while read -r lib; do
      real=$(readlink -f "$lib")
      [[ -e $stage/lib/$(basename "$real") ]] || cp "$real" "$stage/lib/"
      [[ $(basename "$lib") == $(basename "$real") ]] || ln -sf "$(basename "$real")" "$stage/lib/$(basename "$lib")"
    done
  # A machine with its own Open MPI gets the carried hwloc removed (below); the
  # StarPU peer needs one, so a copy waits in lib/fallback for a machine without.
  mkdir -p "$stage/lib/fallback"
  cp -a "$stage"/lib/libhwloc* "$stage/lib/fallback/" 2>/dev/null || true
  mkdir -p "$dir"
  tar -C "$stage" -cJf "$dir/gpu_node.tar.xz" .
  rm -rf "$stage"
  echo "gpu_node.sh pack: $(du -h "$dir/gpu_node.tar.xz" | cut -f1) in $dir/gpu_node.tar.xz"
}

# $STEP_FILTER (an extended regex on step names, e.g. 'tests|check_lu_gpu_panels_d')
# runs part of a step group: selected NAME says whether step NAME runs.
selected() { [[ $1 =~ ${STEP_FILTER:-.} ]]; }

step() {  # step NAME COMMAND...: runs it with its log in $out/NAME.log, records the outcome
  local name=$1
  shift
  # $STEP_TIMEOUT (seconds) stops a step that hangs, so that one stuck run
  # cannot spend a short lease.
  selected "$name" || return 0
  local t0=$SECONDS start
  start=$(date -u +%FT%T.%3N)
  timeout -k 10 "${STEP_TIMEOUT:-0}" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$out/steps.txt"
  # UTC start and end, for analysis/gpu_clocks.py to cut gpu_clocks.csv by step.
  echo "$name $start $(date -u +%FT%T.%3N)" >>"$out/step_times.txt"
  tail -n 25 "$out/$name.log"
}

run() {
  out=${3:-results/gpu_node}
  local steps=${4:-tests,sanitizer,check,bench}
  local root=/tmp/tessera-gpu s
  IFS=, read -ra todo <<<"$steps"
  for s in "${todo[@]}"; do
    case $s in
      tests | sanitizer | check | calibrate | kernels | ooc | bench | trace | tune | mpi | starpu) ;;
      *) echo "gpu_node.sh run: unknown step '$s' (tests, sanitizer, check, calibrate, kernels, ooc, bench, trace, tune, mpi, starpu)" >&2
         exit 2 ;;
    esac
  done
  [[ -f $dir/gpu_node.tar.xz ]] || { echo "gpu_node.sh run: $dir/gpu_node.tar.xz is missing (gpu_node.sh pack makes it)" >&2; exit 2; }
  # A filter or a limit that is not one would skip or stop every step unnoticed.
  [[ x =~ ${STEP_FILTER:-.} ]]
  (($? != 2)) || { echo "gpu_node.sh run: STEP_FILTER '$STEP_FILTER' is not an extended regular expression" >&2; exit 2; }
  [[ ${STEP_TIMEOUT:-0} =~ ^[0-9]+$ ]] ||
    { echo "gpu_node.sh run: STEP_TIMEOUT '$STEP_TIMEOUT' is not a number of seconds (0: no limit)" >&2; exit 2; }
  [[ ${BENCH_TIMEOUT:-150} =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu_node.sh run: BENCH_TIMEOUT '$BENCH_TIMEOUT' is not a positive number of seconds" >&2; exit 2; }
  [[ ${MPI_THREADS:-3} =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu_node.sh run: MPI_THREADS '$MPI_THREADS' is not a positive number of threads" >&2; exit 2; }
  local order
  [[ ${TUNE_BUDGET:-60} =~ ^[0-9]*[1-9][0-9]*([.][0-9]+)?$|^0*[.][0-9]*[1-9][0-9]*$ ]] ||
    { echo "gpu_node.sh run: TUNE_BUDGET '$TUNE_BUDGET' is not a positive number of seconds (real runs decide)" >&2; exit 2; }
  [[ ${TUNE_ALGOS:-cholesky,qr} =~ ^(cholesky|qr)(,(cholesky|qr))*$ ]] ||
    { echo "gpu_node.sh run: TUNE_ALGOS '$TUNE_ALGOS' is not a comma-separated list of cholesky, qr" >&2; exit 2; }
  if [[ ,$steps, == *,tune,* && -n ${TUNE_MACHINE:-} && ! -f $TUNE_MACHINE ]]; then
    echo "gpu_node.sh run: TUNE_MACHINE '$TUNE_MACHINE' is not a file" >&2; exit 2
  fi
  for order in MPI_N OOC_N TRACE_N TUNE_N; do
    [[ ${!order:-1} =~ ^[1-9][0-9]*$ ]] ||
      { echo "gpu_node.sh run: $order '${!order}' is not a positive matrix order" >&2; exit 2; }
  done
  mkdir -p "$out" "$root"
  tar -C "$root" -xJf "$dir/gpu_node.tar.xz"
  # Open MPI: the machine's own where it has one (same libmpi.so.40 ABI:
  # ours would mix with its plugins), else the carried one at Debian's paths.
  if command -v mpirun >/dev/null && [[ ! -e $root/.carried-mpi ]]; then
    echo "Open MPI: the machine's own ($(command -v mpirun))"
    rm -f "$root"/lib/lib{mpi,open-rte,open-pal,pmix,hwloc,event}*
  else
    cp -an "$root/root/." / 2>/dev/null || true
    ln -sfn /usr/bin/orterun /usr/local/bin/mpirun 2>/dev/null || true
    touch "$root/.carried-mpi"
    export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  export LD_LIBRARY_PATH=$root/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export TESSERA_CUDA_MODULE=$root/build/libtessera_cuda.so
  local b=$root/build
  # On a virtual CPU that names no model ("Intel(R) Xeon(R) Processor")
  # OpenBLAS may fall back to Prescott's SSE3 kernels, several times slower
  # (it did on one lent machine). Choose from the CPU's instruction set
  # instead, unless the caller chose.
  if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
    local flags
    flags=$(grep -m1 '^flags' /proc/cpuinfo)
    # (Debian's OpenBLAS 0.3.21 refuses to force Cooperlake: "Core not
    # found"; SkylakeX's kernels are its AVX-512 ones.)
    if [[ $flags == *avx512f* ]]; then export OPENBLAS_CORETYPE=SkylakeX
    elif [[ $flags == *avx2* ]]; then export OPENBLAS_CORETYPE=Haswell
    fi
  fi
  {
    date -u +%FT%TZ
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} (unset: OpenBLAS's own choice)"
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
    grep -m1 'model name' /proc/cpuinfo
    echo "cores: $(nproc)"
    OPENBLAS_VERBOSE=2 "$root/build/bench_kernels" --benchmark_filter=NONE 2>&1 | grep -i core | head -1
  } | tee "$out/machine.txt"
  : >"$out/steps.txt"
  : >"$out/step_times.txt"
  # The GPU's clocks, power, temperature and what holds its clocks back,
  # every 200 ms while the steps run (OUT/gpu_clocks.csv; analysis/gpu_clocks.py
  # sums them up per step): the calibration times each kernel for a few
  # milliseconds, a benchmark loads the GPU for minutes, and a GPU that slows
  # under a sustained load would make every prediction from the calibration
  # fast. (The reasons' field is clocks_event_reasons since driver 535,
  # clocks_throttle_reasons before. nvidia-smi's timestamps are local time:
  # TZ=UTC makes them the steps' UTC. The logger stops when this script
  # ends, however it ends.)
  local reasons=clocks_event_reasons.active
  clocks_pid=''
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=$reasons --format=csv,noheader >/dev/null 2>&1 || reasons=clocks_throttle_reasons.active
    TZ=UTC nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,$reasons \
      --format=csv,nounits -lms 200 >"$out/gpu_clocks.csv" 2>"$out/gpu_clocks.err" &
    clocks_pid=$!
    trap '[[ -n ${clocks_pid:-} ]] && kill "$clocks_pid" 2>/dev/null' EXIT
  fi
  # Rows: bench_gpu.py's defaults unless BENCH_ROWS names others (pinned
  # against pageable memory, say: 'cholesky:--B 2048 --s 1;cholesky:--B 2048 --s 1 --pageable').
  local bench_rows=()
  if [[ -n ${BENCH_ROWS:-} ]]; then
    IFS=';' read -ra bench_rows <<<"$BENCH_ROWS"
    bench_rows=(--rows "${bench_rows[@]}")
  fi
  local t=$(( $(nproc) - 3 ))  # compute threads: the GPU's feeder and device-communication threads take cores too
  for s in "${todo[@]}"; do
    case $s in
      tests) step tests $b/tests/tessera_cuda_tests --gtest_brief=1 ;;
      sanitizer)
        for a in cholesky qr lu; do
          step "memcheck_$a" compute-sanitizer --tool memcheck --error-exitcode 9 \
            $b/tessera run --algo $a --n 1024 --B 256 --gpus 1 --device cuda --threads 2 --check $([[ $a == lu ]] && echo --d 1)
        done
        step memcheck_lu_gpu_panels compute-sanitizer --tool memcheck --error-exitcode 9 \
          $b/tessera run --algo lu --n 1024 --B 256 --gpus 1 --device cuda --threads 2 --check --d 0 ;;
      check)
        for a in cholesky qr lu; do
          for p in d s; do
            step "check_${a}_$p" $b/tessera run --algo $a --n 8192 --precision $p --B 1024 --gpus 1 --device cuda \
              --threads $t --check $([[ $a == lu ]] && echo --d 1) --json "$out/check_${a}_$p.json"
          done
        done
        for a in cholesky qr lu; do  # the other side of bench's table: cuSOLVER's factors, checked the same way
          step "check_cusolver_$a" $b/tessera run --algo $a --n 8192 --impl cusolver --check \
            --json "$out/check_cusolver_$a.json"
        done
        step check_lu_partial $b/tessera run --algo lu --pivot partial --n 8192 --B 1024 --gpus 1 --device cuda \
          --threads $t --check --d 1 --json "$out/check_lu_partial.json"
        for p in d s; do  # every column on the GPU, the panels factored there (cuSOLVER)
          step "check_lu_gpu_panels_$p" $b/tessera run --algo lu --pivot partial --n 8192 --precision $p --B 1024 \
            --gpus 1 --device cuda --threads $t --check --d 0 --json "$out/check_lu_gpu_panels_$p.json"
        done
        step check_qr_binary $b/tessera run --algo qr --qr-tree binary --qr-domain 2 --n 8192 --B 1024 --gpus 1 \
          --device cuda --threads $t --check --json "$out/check_qr_binary.json"
        for p in d s; do  # QR's panels by Cholesky QR (--gpu-qr-panel cholqr), flat and binary trees
          step "check_cholqr_$p" $b/tessera run --algo qr --n 8192 --precision $p --B 1024 --gpus 1 --device cuda \
            --threads $t --gpu-qr-panel cholqr --check --json "$out/check_cholqr_$p.json"
        done
        step check_cholqr_binary $b/tessera run --algo qr --qr-tree binary --qr-domain 2 --n 8192 --B 1024 --gpus 1 \
          --device cuda --threads $t --gpu-qr-panel cholqr --check --json "$out/check_cholqr_binary.json"
        # Three compute streams (panels on the high-priority one), and Cholesky's TRSM by inverted blocks
        for a in cholesky qr lu; do
          step "check_streams_$a" $b/tessera run --algo $a --n 8192 --B 1024 --gpus 1 --device cuda --threads $t \
            --gpu-streams 3 --check $([[ $a == cholesky ]] && echo --gpu-trsm-inverse 256) \
            $([[ $a == lu ]] && echo --d 0 --pivot partial) --json "$out/check_streams_$a.json"
        done
        # Every column on the GPU (--dist gpu-columns; LU: --d 0), one tile row: LAPACK's blocked algorithms, tall panels
        for a in cholesky qr lu; do
          for p in d s; do
            step "check_gpucols_${a}_$p" $b/tessera run --algo $a --n 8192 --precision $p --B 8192 --s 4 --b 2048 \
              $([[ $a == lu ]] && echo --d 0 --pivot partial || echo --dist gpu-columns) --gpus 1 --device cuda \
              --threads $t --gpu-streams 2 --check --json "$out/check_gpucols_${a}_$p.json"
          done
        done
        step check_gpucols_qr_group512 $b/tessera run --algo qr --n 8192 --B 8192 --s 4 --b 2048 --ib 128 \
          --dist gpu-columns --gpu-qr-group 512 --gpus 1 --device cuda --threads $t --check \
          --json "$out/check_gpucols_qr_group512.json" ;;
      calibrate)
        # The node's machine file (issue 15 point 7): its cores (one at a time, the square
        # sizes only: a core's BLAS-3 rate is flat beyond them) and then its GPU added.
        step calibrate_cores $b/tessera calibrate --quick --sizes 512,1024 --for-n 0 --precision "${CAL_PRECISIONS:-d}" \
          --name lent-gpu-node --out "$out/cores.json"
        step calibrate_gpu $b/tessera calibrate --device cuda --base "$out/cores.json" --precision "${CAL_PRECISIONS:-d}" \
          --name lent-gpu-node --out "$out/node.json" ${CAL_GPU_ARGS:-}
        # The same with the GPU's cache evicted before each call (is a restored operand's warm cache
        # why TRSM and POTF2' ran 1.7-2x their calibrated time inside a run? experiments/README.md)
        step calibrate_gpu_cold $b/tessera calibrate --device cuda --cold --base "$out/cores.json" \
          --precision "${CAL_PRECISIONS:-d}" --name lent-gpu-node-cold --out "$out/node-cold.json" ;;
      kernels) step kernels $b/bench_cuda_kernels --benchmark_filter="${KERNELS_FILTER:-.}" \
                 --benchmark_min_time=0.2 --benchmark_out="$out/kernels.json" --benchmark_out_format=json ;;
      ooc)
        local n=${OOC_N:-65536} manifest="$out/runs.json" sep=""
        # Bytes touched: Cholesky its lower triangle's tiles, QR the whole matrix (2048-tiles, T factors aside).
        local tri=$(( (n / 2048) * (n / 2048 + 1) / 2 * 2048 * 2048 * 8 )) full=$(( n * n * 8 ))
        printf '{"machine_file": "node.json", "note": "gpu_node.sh ooc, N = %s", "runs": [\n' "$n" >"$manifest"
        ooc_run() {  # ooc_run NAME ARGS...: one run, its JSON and its manifest entry
          local name=$1; shift
          selected "ooc_$name" || return 0  # not run: not in the manifest either
          step "ooc_$name" $b/tessera run "$@" --gpus 1 --device cuda --threads $t --json "$out/ooc_$name.json"
          local args; args=$(printf '"%s", ' "$@"); args=${args%, }
          printf '%s {"name": "%s", "file": "ooc_%s.json", "args": [%s]}\n' "$sep" "$name" "$name" "$args" >>"$manifest"
          sep=","
        }
        ooc_run chol_in --algo cholesky --n $n --B 2048 --s 1
        ooc_run chol_nextuse --algo cholesky --n $n --B 2048 --s 1 --gpu-memory $((tri * 2 / 3))
        ooc_run chol_lru --algo cholesky --n $n --B 2048 --s 1 --gpu-memory $((tri * 2 / 3)) --eviction lru
        ooc_run qr_in --algo qr --n $n --B 4096 --s 1
        ooc_run qr_nextuse --algo qr --n $n --B 4096 --s 1 --gpu-memory $((full * 2 / 3))
        ooc_run chol_check --algo cholesky --n 16384 --B 2048 --s 1 --check --gpu-memory $((36 * 2048 * 2048 * 8 * 2 / 3))
        ooc_run qr_check --algo qr --n 16384 --B 2048 --s 1 --check --gpu-memory $((16384 * 16384 * 8 * 2 / 3))
        printf ']}\n' >>"$manifest" ;;
      bench) step bench /usr/bin/env PYTHONUNBUFFERED=1 python3 experiments/bench_gpu.py --binary $b/tessera --threads $t \
               --out "$out/bench" --json "$out/bench.json" --timeout "${BENCH_TIMEOUT:-150}" --precisions "${BENCH_PRECISIONS:-d}" \
               --check "${BENCH_CHECK:-none}" "${bench_rows[@]}" ;;
      trace)
        local trace_rows=("cholesky:--B 2048 --s 1 --gpu-kernel-depth 1") i=0
        [[ -n ${TRACE_ROWS:-} ]] && IFS=';' read -ra trace_rows <<<"$TRACE_ROWS"
        local row
        for row in "${trace_rows[@]}"; do
          [[ $row == *:* ]] || { echo "gpu_node.sh: TRACE_ROWS row '$row' is not ALGO:ARGS" >&2; continue; }
          local -a row_args
          read -ra row_args <<<"${row#*:}"
          # A row may give its own --threads (fewer busy cores beside the GPU's manager thread).
          local -a threads_arg=(--threads $t)
          [[ " ${row_args[*]} " == *" --threads "* ]] && threads_arg=()
          step "trace_$i" $b/tessera run --algo "${row%%:*}" --n "${TRACE_N:-32768}" "${row_args[@]}" --gpus 1 \
            --device cuda "${threads_arg[@]}" --trace "$out/trace_$i.json" --json "$out/trace_$i.run.json"
          i=$((i + 1))
        done ;;
      tune)
        # Does the tuner, its real runs on the GPU, choose what the bench rows measured fastest?
        local a algos=${TUNE_ALGOS:-cholesky,qr}
        for a in ${algos//,/ }; do
          step "tune_$a" $b/tessera tune --algo "$a" --n "${TUNE_N:-32768}" --gpus 1 --device cuda --threads $t \
            --machine "${TUNE_MACHINE:-$out/node.json}" --budget "${TUNE_BUDGET:-60}" \
            $([[ $a == qr ]] && echo --ib 128 ${TUNE_QR_ARGS:-}) --out "$out/tune_$a.json"
        done ;;
      mpi)
        # One step per tessera configuration ($MPI_TILE_ARGS, ';'-separated),
        # each alternated with ScaLAPACK in its own run of bench_mpi.py.
        local mpi_rows=("") i=0
        [[ -n ${MPI_TILE_ARGS:-} ]] && IFS=';' read -ra mpi_rows <<<"$MPI_TILE_ARGS"
        for row in "${mpi_rows[@]}"; do
          step "mpi_$i" /usr/bin/env PYTHONUNBUFFERED=1 python3 experiments/bench_mpi.py --build $b \
            --algos "${MPI_ALGOS:-qr,cholesky}" --grid 2x2 --n "${MPI_N:-16384}" --threads "${MPI_THREADS:-3}" \
            --scalapack-threads 4 --mpirun-args="${MPI_MPIRUN_ARGS---bind-to none}" --reps 3 --markdown \
            --out "$out/mpi_$i" --check "${MPI_CHECK:-first}" \
            --tile-args "$row"
          i=$((i + 1))
        done ;;
      starpu)
        # The carried hwloc only where the machine's own Open MPI left none (a library not found).
        local lp=$LD_LIBRARY_PATH
        ldd "$b/starpu_peer" 2>/dev/null | grep -q "not found" && lp=$lp:$root/lib/fallback
        step starpu /usr/bin/env LD_LIBRARY_PATH="$lp" PYTHONUNBUFFERED=1 python3 experiments/bench_starpu.py \
          --build $b --threads 4 \
          --configs "${STARPU_CONFIGS:-1920:32,3840:128,7680:320}" --reps 3 --markdown --out "$out/starpu"
        if [[ -n ${STARPU_GRID_CONFIGS:-} ]]; then
          step starpu_2x2 /usr/bin/env LD_LIBRARY_PATH="$lp" PYTHONUNBUFFERED=1 python3 experiments/bench_starpu.py \
            --build $b --grid 2x2 \
            --threads 3 --mpirun-args="--bind-to none" --configs "$STARPU_GRID_CONFIGS" --reps 3 --markdown \
            --out "$out/starpu_2x2"
        fi ;;
    esac
  done
  cat "$out/steps.txt"
}

case $mode in
  pack) pack ;;
  run) run "$@" ;;
  '') sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  *) echo "gpu_node.sh: unknown mode '$mode' (pack [DIR] or run [DIR] [OUT] [STEPS]; no mode: the usage)" >&2; exit 2 ;;
esac
