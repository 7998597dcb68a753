"""Every process a harness starts ends with it.

A harness that fails between starting a JVM and ending it, or that ctest's timeout kills, must
not leave a JVM spinning beside the rest of the suite or the next measurement, taking the CPU they
are judged by. After install(), every process started through subprocess (Popen, run, ...) gets
PR_SET_PDEATHSIG = SIGKILL — the kernel kills it when the thread that started it ends, or the
whole harness (a child that changes its user loses that) — and whatever is still running when
the harness exits is killed then (end_children, also callable earlier). Start processes from the
main thread: a helper thread's end would kill its children.
"""
import atexit
import ctypes
import signal
import subprocess
import sys

_STARTED = []
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))


class _Popen(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("preexec_fn", _die_with_parent)
        super().__init__(*args, **kwargs)
        _STARTED.append(self)


def end_children():
    """Kills what was started and is still running."""
    for proc in _STARTED:
        if proc.poll() is None:
            proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    _STARTED.clear()


def hogs(n):
    """N CPU hogs (a Python busy loop each), a busy host beside a measurement: the caller kills
    them when it ends (end_children does at the latest)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def install():
    """From now on subprocess starts its processes through _Popen (subprocess.run too)."""
    if subprocess.Popen is not _Popen:
        subprocess.Popen = _Popen
        atexit.register(end_children)
