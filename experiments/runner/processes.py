"""The processes of a sweep: each run in a session of its own, killed with the runner; the results folder's lock.

A run's process group (mpirun's ranks and whatever else it started) ends on a timeout, on Ctrl-C or a stop signal
to the runner, and when the runner dies; one sweep at a time writes a folder.
"""
import fcntl
import os
import signal
import subprocess
import sys
import threading

from .definition import ROOT, display_path

KILL_GRACE_S = 5.0  # after a timeout's SIGTERM to a run's process group, seconds before SIGKILL


class CannotStart(RuntimeError):
    """A sweep that cannot start or go on: the tessera binary could not be started (no run can succeed), or another
    sweep is writing its folder."""


def lock_folder(out_dir):
    """An exclusive lock on the results folder for the sweep's lifetime (a descriptor of the folder itself, so
    nothing is left in it; the lock goes with the process, however it ends): a second sweep into the same folder,
    started by mistake, would run every pending run again beside the first, and real runs would time each other."""
    fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise CannotStart("%s: another sweep is writing this folder (wait for it to end, or give another --out)" %
                          display_path(out_dir))
    return fd


_RUNNING = set()  # process groups of the runs in progress (each run's own session)
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()  # set by kill_running: a run started after it is killed at once
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)  # end the runner as Ctrl-C does (runs killed, exit 130)


def _signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the whole group has gone already


def run_in_group(cmd, timeout_s):
    """Runs cmd in a session (process group) of its own: (exit status or None, stdout, stderr, timed out). On a
    timeout the whole group gets SIGTERM, then SIGKILL after KILL_GRACE_S: mpirun's ranks and whatever else the run
    started go with it, not only the process started here. The process is killed too when the runner dies
    (_die_with_parent). OSError when cmd cannot be started."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace", start_new_session=True, preexec_fn=_die_with_parent())
    with _RUNNING_LOCK:
        _RUNNING.add(p.pid)
        if _STOPPING.is_set():  # started as the sweep stopped: kill_running did not see it
            _signal_group(p.pid, signal.SIGKILL)
    try:
        try:
            out, err = p.communicate(timeout=timeout_s)
            return p.returncode, out, err, False
        except subprocess.TimeoutExpired:
            _signal_group(p.pid, signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(p.pid, signal.SIGKILL)
                out, err = p.communicate()
            _signal_group(p.pid, signal.SIGKILL)  # a rank that outlived its mpirun
            return None, out or "", err or "", True
        except BaseException:  # KeyboardInterrupt while waiting: the run goes too
            _signal_group(p.pid, signal.SIGKILL)
            p.wait()
            raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(p.pid)


def _die_with_parent():
    """A preexec_fn for a run's process: prctl(PR_SET_PDEATHSIG, SIGKILL), so that a runner killed without a chance
    to end its runs (SIGKILL, a crash) takes them with it, where each is a session of its own that no signal to the
    runner's group reaches. None (nothing to do) off Linux or without a libc ctypes can load."""
    if not sys.platform.startswith("linux"):
        return None
    if not _PRCTL:
        try:
            import ctypes
            _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl)
        except (ImportError, OSError, AttributeError):
            _PRCTL.append(None)
    prctl = _PRCTL[0]
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec():
        prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        if os.getppid() != parent:  # the runner died before that: no signal will come
            os._exit(137)
    return preexec


_PRCTL = []


def terminated(signum, frame):
    """A handler of STOP_SIGNALS: the runner stops as on Ctrl-C."""
    raise KeyboardInterrupt("terminated (%s)" % signal.Signals(signum).name)


def new_sweep():
    """Runs may start again (after kill_running stopped an earlier sweep of this process)."""
    _STOPPING.clear()


def kill_running():
    """SIGKILL to every run in progress (its whole process group), e.g. on Ctrl-C; a run starting after this is
    killed as it starts (until the next sweep)."""
    with _RUNNING_LOCK:
        _STOPPING.set()
        groups = list(_RUNNING)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
