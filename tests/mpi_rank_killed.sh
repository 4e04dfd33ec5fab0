#!/bin/bash
# A node that dies mid-run must not hang the others: starts a distributed
# Cholesky on 2 MPI ranks (grid 1x2), kills one tessera rank (not mpirun)
# with SIGKILL as soon as the factorization runs (the --progress-file marker
# a rank creates when its first factorization task has finished), and passes
# when mpirun and every rank have ended within 10 s of the kill, mpirun's
# status is non-zero, it says which rank died of signal 9, and no rank printed
# a summary line. What still runs after 10 s is listed, then killed.
#   mpi_rank_killed.sh MPIEXEC TESSERA RANK
set -u
mpiexec=$1 tessera=$2 victim_rank=${3:-1}
n=${TESSERA_FAULT_N:-6000}
grace=10
start_limit=120  # seconds for the matrix to be generated and the first task to finish

dir=$(mktemp -d)
mpirun_pid=
# Whatever way this script ends, nothing it started outlives it.
cleanup() {
  [[ -n $mpirun_pid ]] && kill -9 "$mpirun_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# Ended: gone, or a zombie waiting for its parent.
ended() { [[ ! -r /proc/$1/stat ]] || [[ $(awk '{ print $3 }' /proc/$1/stat 2>/dev/null) == Z ]]; }
descendants() {
  local c
  for c in $(pgrep -P "$1"); do
    echo "$c"
    descendants "$c"
  done
}
# Waits for mpirun, sets rc to its status, and forgets its pid (it may be reused).
reap() {
  wait "$mpirun_pid"
  rc=$?
  mpirun_pid=
}
show() {
  echo "--- stdout ---"; cat "$dir/out"
  echo "--- stderr ---"; cat "$dir/err"
}

marker=$dir/factoring
"$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$tessera" run --algo cholesky --n "$n" --grid 1x2 \
  --progress-file "$marker" </dev/null >"$dir/out" 2>"$dir/err" &
mpirun_pid=$!
t0=$(now)

# The two tessera ranks among mpirun's descendants, and which is which.
declare -A rank_pid=()
for _ in $(seq 200); do
  for p in $(descendants "$mpirun_pid"); do
    [[ $(cat /proc/$p/comm 2>/dev/null) == tessera ]] || continue
    r=$(tr '\0' '\n' </proc/$p/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [[ -n $r ]] && rank_pid[$r]=$p
  done
  [[ ${#rank_pid[@]} -eq 2 ]] && break
  ended "$mpirun_pid" && break
  sleep 0.1
done
if [[ ${#rank_pid[@]} -ne 2 ]]; then
  echo "FAIL: did not find 2 tessera ranks under mpirun (pid $mpirun_pid): ${!rank_pid[*]}"
  kill -9 "$mpirun_pid" 2>/dev/null
  reap
  show
  exit 1
fi
echo "mpirun pid $mpirun_pid, rank 0 pid ${rank_pid[0]}, rank 1 pid ${rank_pid[1]} (after $(since "$t0") s)"

# The factorization runs once the marker exists.
victim=${rank_pid[$victim_rank]}
while [[ ! -e $marker ]]; do
  if ended "$mpirun_pid" || ended "$victim"; then
    echo "FAIL: the run ended ($(since "$t0") s) before it marked its factorization started ($marker)"
    reap
    show
    exit 1
  fi
  if ! awk -v a="$t0" -v b="$(now)" -v g="$start_limit" 'BEGIN { exit !(b - a < g) }'; then
    echo "FAIL: no factorization started within $start_limit s ($marker missing)"
    kill -9 "$mpirun_pid" 2>/dev/null
    reap
    show
    exit 1
  fi
  sleep 0.02
done
echo "factorization started at $(since "$t0") s"
if ended "$mpirun_pid" || ended "$victim"; then
  echo "FAIL: the run ended before the kill ($(since "$t0") s): make it longer (TESSERA_FAULT_N, now $n)"
  reap
  show
  exit 1
fi
echo "killing rank $victim_rank (pid $victim) with SIGKILL at $(since "$t0") s"
kill -KILL "$victim"
t_kill=$(now)

# When each one ended, seconds after the kill.
declare -A end_s=()
watched=("$mpirun_pid" "${rank_pid[0]}" "${rank_pid[1]}")
all_ended=false
while awk -v a="$t_kill" -v b="$(now)" -v g="$grace" 'BEGIN { exit !(b - a < g) }'; do
  all_ended=true
  for p in "${watched[@]}"; do
    if ended "$p"; then
      [[ -n ${end_s[$p]:-} ]] || end_s[$p]=$(since "$t_kill")
    else
      all_ended=false
    fi
  done
  $all_ended && break
  sleep 0.1
done
echo "ended after the kill: rank 0 ${end_s[${rank_pid[0]}]:-no} s, rank 1 ${end_s[${rank_pid[1]}]:-no} s," \
  "mpirun ${end_s[$mpirun_pid]:-no} s"

if ! $all_ended; then
  echo "FAIL: ${grace} s after killing rank $victim_rank, still running:"
  for p in "$mpirun_pid" "${rank_pid[0]}" "${rank_pid[1]}" $(descendants "$mpirun_pid"); do
    ended "$p" || ps -o pid=,ppid=,stat=,etime=,args= -p "$p"
  done | sort -u
  for p in "${rank_pid[0]}" "${rank_pid[1]}" "$mpirun_pid"; do
    ended "$p" || kill -9 "$p" 2>/dev/null
  done
  reap
  show
  exit 1
fi
reap
echo "all ended $(since "$t_kill") s after the kill; mpirun exit status $rc"
show
fail=0
[[ $rc -ne 0 ]] || { echo "FAIL: mpirun exited 0 although a rank was killed"; fail=1; }
# Open MPI's abort text names the rank that died and the signal.
grep -Eq "process rank $victim_rank with PID [0-9]+ on node .* exited on signal 9 \\(Killed\\)" "$dir/err" ||
  { echo "FAIL: mpirun did not say that rank $victim_rank exited on signal 9"; fail=1; }
# The run did not finish anywhere: no summary line from any rank.
if grep -Eq '^cholesky +tile ' "$dir/out" "$dir/err"; then
  echo "FAIL: a rank printed a summary line although the run was killed"
  fail=1
fi
exit $fail
