#!/usr/bin/env bash
# A limit on processes (`ulimit -u`, a cgroup's pids.max) reached as a run starts its threads, at each of them in
# turn: the generator, each compute thread, the GPU manager, the device communication thread, an emulated GPU's copy
# engine; and the kernel timer's threads. Every run ends with exit 4 and one line naming the thread that could not start, or succeeds (0); never a
# crash or a hang (the runtime's started threads used to run on after the error had unwound their state: SIGSEGV,
# SIGABRT or a hang). RLIMIT_NPROC binds only an unprivileged user: the runs are nobody's (setpriv), so this needs
# root and util-linux's setpriv and prlimit; it says so and passes where they are missing.
# Usage: thread_limits.sh TESSERA
set -u
tessera=$1
fail() { echo "FAIL: $*"; exit 1; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v prlimit > /dev/null; then
  echo "skipped: needs root, setpriv and prlimit"
  exit 0
fi
dir=$(mktemp -d)
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
seen=""
for args in "--threads 4" "--threads 2 --gpus 1"; do
  for nproc in 2 3 4 5 6 7 8 9 10; do
    # The limit counts every process and thread of the user: the last run's must be gone (reaped), or one thread
    # fewer starts than nproc says and the run stops one thread early.
    for _ in $(seq 200); do pgrep -u 65534 > /dev/null || break; sleep 0.05; done
    # shellcheck disable=SC2086
    timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=$nproc \
      "$tessera" run --algo cholesky --n 800 --B 64 $args > "$dir/out" 2> "$dir/err"
    rc=$?
    case $rc in
      0) ;;
      4) [ "$(wc -l < "$dir/err")" = 1 ] && grep -q "^tessera: error: cannot start the thread '" "$dir/err" ||
           { cat "$dir/err"; fail "$args, nproc $nproc: exit 4 without the one line naming the thread"; }
         seen="$seen $(sed -n "s/^tessera: error: cannot start the thread '\([^']*\)'.*/\1/p" "$dir/err" | tr ' ' _)" ;;
      *) cat "$dir/out" "$dir/err"; fail "$args, nproc $nproc: exit $rc (124: a hang; 134, 139: a crash)" ;;
    esac
  done
done
# The kernel timer's threads (tessera calibrate, and run --B auto's tuning): each concurrency level starts its other
# threads; one that cannot start stops those that did (a joinable thread destroyed with its vector ended the process,
# exit 134). Its stderr also holds the progress lines (and OpenBLAS's own complaints): one error line, the last.
for nproc in 2 3 4; do
  for _ in $(seq 200); do pgrep -u 65534 > /dev/null || break; sleep 0.05; done
  timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=$nproc "$tessera" calibrate \
    --threads 3 --quick --kernels gsmm --sizes 64 --for-n 0 --precision d --out /dev/null > "$dir/out" 2> "$dir/err"
  rc=$?
  case $rc in
    0) ;;
    4) [ "$(grep -c '^tessera: error' "$dir/err")" = 1 ] &&
         tail -n 1 "$dir/err" | grep -q "^tessera: error: cannot start the thread 'kernel timer [0-9]*'" ||
         { cat "$dir/err"; fail "calibrate, nproc $nproc: exit 4 without one last line naming the thread"; }
       seen="$seen kernel_timer" ;;
    *) cat "$dir/out" "$dir/err"; fail "calibrate, nproc $nproc: exit $rc (124: a hang; 134, 139: a crash)" ;;
  esac
done
# Which thread a given limit stops at can move by one from run to run (the user's count includes threads the kernel
# has not yet reaped), so each kind is asked for, not each thread: the generator, a compute thread, a GPU's thread.
for pattern in "generator" "cpu[0-9]" "gpu1|gpu-comm|GPU_1_.*copy_engine" "kernel_timer"; do
  echo "$seen" | tr ' ' '\n' | grep -Eq "^($pattern)" || fail "no run stopped at a thread matching '$pattern' (stopped at:$seen)"
done
echo "thread limits: every run exit 0 or 4 naming its thread (stopped at:$seen)"
