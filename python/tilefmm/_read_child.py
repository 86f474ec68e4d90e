"""The child process of an isolated read (_isolated.py): reads one
snapshot with tfmm_snapshot_read and sends what it read through a pipe.

Run as a script by a fresh interpreter (python -E -s -S), not imported:
it loads nothing of the package but _snapshot_c (ctypes alone) from its
own directory, so that it starts in tens of milliseconds. A damaged HDF5
file that crashes or hangs libhdf5 here ends this process, never the
caller's.

    python _read_child.py LIBRARY FD PATH FORMAT TYPES ATTRIBUTES CPU

On FD: an 8-byte little-endian length, that many bytes of JSON (the
status, the message and the scalars of the tfmm_snapshot), then the
arrays the JSON names under "arrays", in that order, as raw native
bytes; each array is freed once sent, so that the two processes hold two
copies of one array at most. The exit status is 0 when all was sent."""

import ctypes
import json
import os
import resource
import signal
import struct
import sys

from _snapshot_c import ReadOptionsC, SnapshotC

MESSAGE_SIZE = 8192
# The tfmm_snapshot arrays: name, element bytes, elements per body.
ARRAYS = (("pos", 8, 3), ("vel", 8, 3), ("mass", 8, 1), ("acc", 8, 3),
          ("pot", 8, 1), ("ids", 8, 1), ("bins", 1, 1))


def put(fd, data):
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def attrs(ptr, count):
    return [[ptr[k].name.decode(errors="surrogateescape"),
             ptr[k].value.decode(errors="surrogateescape")]
            for k in range(count)]


def bound(cpu):
    """The signals of the caller's handlers back to their defaults (a
    Ctrl-C ends this child at once), no core file, and the kernel's bound
    of CPU time (SIGXCPU at cpu seconds, SIGKILL a second on)."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGPIPE",
                 "SIGUSR1", "SIGUSR2", "SIGXCPU", "SIGXFSZ"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def main():
    library, fd, path, fmt, types, attributes, cpu = sys.argv[1:8]
    fd = int(fd)
    bound(int(cpu))
    lib = ctypes.CDLL(library)
    lib.tfmm_snapshot_read.restype = ctypes.c_int
    lib.tfmm_snapshot_read.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ReadOptionsC),
        ctypes.POINTER(SnapshotC), ctypes.c_char_p, ctypes.c_size_t]
    lib.tfmm_snapshot_free.restype = None
    lib.tfmm_snapshot_free.argtypes = [ctypes.POINTER(SnapshotC)]
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]
    options = ReadOptionsC(format=int(fmt), types=int(types),
                           attributes=int(attributes), flag=b"types")
    snap = SnapshotC()
    message = ctypes.create_string_buffer(MESSAGE_SIZE)
    status = lib.tfmm_snapshot_read(os.fsencode(path), ctypes.byref(options),
                                    ctypes.byref(snap), message, MESSAGE_SIZE)
    u = snap.units
    head = {"status": status,
            "message": message.value.decode(errors="replace"),
            "n": snap.n, "time": snap.time,
            "units": [u.mass, u.length, u.velocity, u.current,
                      u.temperature],
            "units_source": snap.units_source, "format": snap.format,
            "G": snap.G,
            "note": snap.note.decode(errors="replace") if snap.note else None,
            "params": attrs(snap.params, snap.nparams),
            "state": attrs(snap.state, snap.nstate) if snap.nstate else None,
            "arrays": []}
    # A failed read holds no bodies: only what was read is sent.
    sent = [a for a in ARRAYS if status == 0 and getattr(snap, a[0])]
    head["arrays"] = [name for name, _, _ in sent]
    text = json.dumps(head).encode()
    put(fd, struct.pack("<Q", len(text)))
    put(fd, text)
    for name, size, per_body in sent:
        ptr = getattr(snap, name)
        address = ctypes.cast(ptr, ctypes.c_void_p).value
        put(fd, (ctypes.c_char * (size * per_body * snap.n)).from_address(
            address))
        setattr(snap, name, None)
        free(address)
    lib.tfmm_snapshot_free(ctypes.byref(snap))
    os.close(fd)


if __name__ == "__main__":
    main()
    os._exit(0)  # no atexit handler, nothing of the caller's closed twice
