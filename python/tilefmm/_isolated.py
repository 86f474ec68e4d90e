"""tilefmm.read of an HDF5 file in a child process, as the command line
reads it (apps/isolated_read.c, docs/formats.md): libhdf5 trusts the
metadata it reads, and a file in HDF5's earliest format (h5py's default,
many GADGET-4 and SWIFT files) carries no checksum on it, so one damaged
byte can crash libhdf5 (SIGSEGV) or send it round a loop for ever. The
library cannot catch either and never forks; here the child is a fresh
interpreter running _read_child.py, which sends the bodies back through a
pipe. A child killed by a signal, or past its bound of CPU time, becomes
a tilefmm.FileError naming the file, never the end of the caller.

A fresh interpreter rather than os.fork: a fork of a process with threads
(numpy's BLAS pool, a caller's) may inherit a lock another thread held,
and Python warns of it. The child imports ctypes alone, so that it starts
in tens of milliseconds.

The environment tunes it as it tunes the command line:
TILEFMM_READ_ISOLATION=off (or 0) reads in process (a debugger; a
snapshot too large to hold twice for a moment), TILEFMM_READ_CPU_LIMIT=S
bounds the child's CPU time to S seconds (default 60 s plus 1 s per 4 MiB
of the file)."""

import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

ENV_OFF = "TILEFMM_READ_ISOLATION"
ENV_CPU = "TILEFMM_READ_CPU_LIMIT"
CHILD = Path(__file__).resolve().with_name("_read_child.py")
# The arrays _read_child.py may send: dtype and shape per body.
ARRAYS = {"pos": (np.float64, (3,)), "vel": (np.float64, (3,)),
          "mass": (np.float64, ()), "acc": (np.float64, (3,)),
          "pot": (np.float64, ()), "ids": (np.uint64, ()),
          "bins": (np.int8, ())}
PIPE_SIZE = 1 << 20  # fewer wake-ups per megabyte than the 64 KiB default


def wanted():
    """Whether reads are isolated (TILEFMM_READ_ISOLATION is not off)."""
    return os.environ.get(ENV_OFF) not in ("off", "0")


def cpu_bound(path):
    """TILEFMM_READ_CPU_LIMIT, else 60 s plus 1 s per 4 MiB of the file
    (reading, gunzipping and converting run at hundreds of MB/s: a reader
    past that is in a loop)."""
    env = os.environ.get(ENV_CPU, "")
    try:
        s = float(env)
        if 1 <= s < 1e9:
            return int(s)
    except ValueError:
        pass
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    return int(60 + size / (4 << 20))


class Lost(Exception):
    """The child stopped sending before the end."""


def _fill(f, view):
    while view:
        got = f.readinto(view)
        if not got:
            raise Lost()
        view = view[got:]


def _receive(f):
    size = bytearray(8)
    _fill(f, memoryview(size))
    (length,) = struct.unpack("<Q", size)
    text = bytearray(length)
    _fill(f, memoryview(text))
    head = json.loads(text.decode())
    n = head["n"]
    arrays = {}
    for name in head["arrays"]:
        dtype, shape = ARRAYS[name]
        a = np.empty((n,) + shape, dtype=dtype)
        _fill(f, memoryview(a).cast("B"))
        arrays[name] = a
    return head, arrays


def _fate(path, status, cpu, used):
    """Why the child did not finish, as the command line says it."""
    sig = -status if status < 0 else 0
    if sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        return (f"{path}: reading was interrupted (signal {sig}, "
                f"{signal.strsignal(sig)})")
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and used >= cpu):
        return (f"{path}: damaged HDF5 file: the reader ran past its bound "
                f"of {cpu} s of CPU time (a loop on damaged metadata?; "
                f"{ENV_CPU}=S raises it)")
    if sig:
        return (f"{path}: damaged HDF5 file: the reader crashed (signal "
                f"{sig}, {signal.strsignal(sig)})")
    if status:
        return (f"{path}: damaged HDF5 file: the reader ended with status "
                f"{status}")
    return f"{path}: damaged HDF5 file: the reader was lost"


def read(library, path, fmt, types, attributes):
    """Reads path in a child process. Returns (head, arrays): the JSON
    _read_child.py sent (status and message included; the caller raises
    on a status other than 0) and the arrays by name; or a message when
    the child did not finish (crashed, cut off, lost); or None when no
    child could be started (the caller reads in process, as the command
    line does when fork fails)."""
    if not sys.executable:  # an embedded interpreter: none to start
        return None
    cpu = cpu_bound(path)
    r, w = os.pipe()
    try:
        import fcntl
        fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    except (ImportError, OSError):
        pass
    args = [sys.executable, "-E", "-s", "-S", str(CHILD), str(library),
            str(w), str(path), str(fmt), str(types),
            str(int(attributes)), str(cpu)]
    try:
        child = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                 pass_fds=(w,))
    except OSError:
        os.close(r)
        os.close(w)
        return None
    os.close(w)
    done = False
    try:
        with open(r, "rb", buffering=0) as f:
            try:
                got = _receive(f)
            except (Lost, ValueError, KeyError):
                got = None  # what did come is not used
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        done = True
    finally:
        if not done:  # interrupted (Ctrl-C): the child goes too
            child.kill()
            child.wait()
    if got is not None and child.returncode == 0:
        return got
    used = usage.ru_utime + usage.ru_stime
    return _fate(str(path), child.returncode, cpu, used)
