#!/usr/bin/env bash
# Sets up, builds and runs tessera on a fresh Debian 12 machine.
#
#   ./setup.sh main    install packages, build, run the main job (experiments/main_job.sh)
#   ./setup.sh test    install packages, build (MPI, the ScaLAPACK and StarPU
#                      peers and SimGrid required), run the test suite, then the
#                      runtime tests again under ThreadSanitizer (build-tsan/)
#   ./setup.sh asan    install packages, build build-asan/ under AddressSanitizer
#                      and UndefinedBehaviorSanitizer, run the test suite there
#                      (not part of `test`: about 35 min of build and 20 of tests)
#   ./setup.sh deps    only install the Debian packages
#   ./setup.sh build   install packages and build build/ (Release, with tests)
#
# Every step is idempotent: installed packages are skipped and builds are
# incremental. Tool output goes to logs under build/; a failing step prints
# the tail of its log and the script exits non-zero.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

BUILD_DIR=build
TSAN_DIR=build-tsan
ASAN_DIR=build-asan
LOG_DIR="$ROOT/$BUILD_DIR/setup-logs"

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libopenblas-dev liblapacke-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
  libsimgrid-dev libopenmpi-dev openmpi-bin libscalapack-openmpi-dev libstarpu-dev
  python3 python3-matplotlib clang-format
)

CURRENT_STEP="start"
step() { CURRENT_STEP="$*"; printf '==> %s\n' "$*"; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }

# run_logged LOG CMD...: runs CMD with its output in LOG; on failure shows the
# tail of LOG and returns CMD's status.
run_logged() {
  local log="$1"; shift
  mkdir -p "$(dirname "$log")"
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    printf 'setup.sh: command failed (exit %d): %s\n' "$rc" "$*" >&2
    printf -- '---- last 40 lines of %s ----\n' "$log" >&2
    tail -n 40 "$log" >&2
    printf -- '----\n' >&2
  fi
  return $rc
}

deps() {
  local missing=() p status
  for p in "${PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    step "packages: all ${#PACKAGES[@]} installed"
    return 0
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "not root and sudo is not available; install: ${missing[*]}"
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  step "packages: installing ${missing[*]} (log: $LOG_DIR/apt.log)"
  run_logged "$LOG_DIR/apt-update.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  run_logged "$LOG_DIR/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# configure_and_build DIR BUILD_TYPE EXTRA_CMAKE_ARGS... (BUILD_TARGETS, if set: only those targets)
configure_and_build() {
  local dir="$1" type="$2"; shift 2
  local targets=()
  [[ -n "${BUILD_TARGETS:-}" ]] && targets=(--target $BUILD_TARGETS)
  local args=(-DCMAKE_BUILD_TYPE="$type" -DTESSERA_BUILD_TESTS=ON "$@")
  if [[ -f "$dir/CMakeCache.txt" ]]; then
    # Re-running cmake on an existing tree is incremental; it keeps the tree's generator.
    step "configure $dir ($type, incremental)"
    run_logged "$LOG_DIR/$dir-configure.log" cmake -S . -B "$dir" "${args[@]}"
  else
    step "configure $dir ($type, Ninja)"
    run_logged "$LOG_DIR/$dir-configure.log" cmake -S . -B "$dir" -G Ninja "${args[@]}"
  fi
  step "build $dir (log: $LOG_DIR/$dir-build.log)"
  run_logged "$LOG_DIR/$dir-build.log" cmake --build "$dir" "${targets[@]}"
}

# build [REQUIRE]: REQUIRE=ON (./setup.sh test) fails configuring when MPI, the
# ScaLAPACK or StarPU peer or SimGrid is missing, so that their tests cannot drop out
# unnoticed; CUDA stays automatic.
build() {
  configure_and_build "$BUILD_DIR" Release -DTESSERA_REQUIRE_TEST_BACKENDS="${1:-OFF}"
}

run_tests() {
  local start=$SECONDS
  step "test: ctest in $BUILD_DIR"
  ctest --test-dir "$BUILD_DIR" --no-tests=error --output-on-failure -j2
  step "test: suite passed in $((SECONDS - start)) s"

  # Only the executables of the `runtime` label run under ThreadSanitizer:
  # building the rest would take half of the instrumented build's time.
  BUILD_TARGETS="tessera_runtime_tests tessera_gpu_tests" \
    configure_and_build "$TSAN_DIR" RelWithDebInfo -DTESSERA_TSAN=ON -DTESSERA_BUILD_BENCHMARKS=OFF
  start=$SECONDS
  step "test: ctest -L runtime in $TSAN_DIR under ThreadSanitizer"
  # --no-tests=error: a label that matches nothing must not read as a pass.
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/tsan.supp" \
    ctest --test-dir "$TSAN_DIR" -L runtime --no-tests=error --output-on-failure -j2
  step "test: ThreadSanitizer runtime tests passed in $((SECONDS - start)) s"
}

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer
# (TESSERA_ASAN; simulated actors then run on threads, see
# platform/simgrid/simgrid_platform.cpp). Left out, because the sanitizer
# itself defeats what they test: the address-space limits (ulimit -v) of the
# out-of-memory tests, which cannot hold its shadow memory, and the reuse of
# freed memory, which it quarantines. Leaks are not checked (the MPI and
# SimGrid libraries keep theirs to the end).
ASAN_EXCLUDE='^(CliBadInput\.MatrixTooLargeForMemoryNamesTheSize|CliPreflight\.AnAddressSpaceLimitExitsFourNamingIt|CliPreflight\.APhantomSimulationsActorsMustFitTheAddressSpace|scalapack_peer_out_of_memory|starpu_peer_refuses_huge|tessera_mpi_host_memory|ParallelUnits\.NewTileMatricesReadAsZeros)$'
run_asan_tests() {
  configure_and_build "$ASAN_DIR" RelWithDebInfo -DTESSERA_ASAN=ON -DTESSERA_BUILD_BENCHMARKS=OFF \
    -DTESSERA_REQUIRE_TEST_BACKENDS=ON
  local start=$SECONDS
  step "test: ctest in $ASAN_DIR under AddressSanitizer and UndefinedBehaviorSanitizer"
  ASAN_OPTIONS="detect_leaks=0" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
    ctest --test-dir "$ASAN_DIR" -E "$ASAN_EXCLUDE" --no-tests=error --output-on-failure -j2 --timeout 1200
  step "test: sanitized suite passed in $((SECONDS - start)) s"
}

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}

[[ $# -eq 1 ]] || usage
on_exit() {
  local rc=$?
  [[ $rc -eq 0 ]] || printf 'setup.sh: FAILED (exit %d) during: %s\n' "$rc" "$CURRENT_STEP" >&2
}
trap on_exit EXIT
case "$1" in
  deps) deps ;;
  build) deps; build ;;
  main)
    deps; build
    step "main job: experiments/main_job.sh"
    experiments/main_job.sh
    ;;
  test) deps; build ON; run_tests ;;
  asan) deps; run_asan_tests ;;
  -h|--help|help) usage 0 ;;
  *) trap - EXIT  # not a failed step: the command is unknown
     printf "setup.sh: unknown command '%s' (main, test, asan, deps or build; ./setup.sh --help)\n" "$1" >&2
     exit 2 ;;
esac
step "done: ./setup.sh $1"
