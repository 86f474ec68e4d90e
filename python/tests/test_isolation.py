"""tilefmm.read of HDF5 files in a child process (tilefmm._isolated), as
the command line reads them: a damaged file that crashes libhdf5, or a
libhdf5 that loops, raises tilefmm.FileError naming the file, and the
interpreter lives on; a good file reads to the very bits (and text) of
the read in process; TILEFMM_READ_ISOLATION=off reads in process.

Each damaged read runs in an interpreter of its own (a subprocess), so
that a read that takes its interpreter down is reported as a failure of
this test, not the end of pytest. The damaged file is the fuzz harness's
GADGET-4-like seed (tests/fuzz, fuzz_make_seeds: $TFMM_MAKE_SEEDS) with 16
bytes of an object header zeroed, on which libhdf5 1.10 reads through a
null pointer (tests/cli/test_hdf5_damage.c); the crash and the loop are
also made certain by a stand-in for H5Fopen preloaded into the reader
(tests/cli/hdf5_fault.c: $TFMM_HDF5_FAULT_LIB)."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import tilefmm

pytestmark = pytest.mark.skipif(not tilefmm.io.has_hdf5(),
                                reason="the library was built without HDF5")

# What the interpreter under test runs: one read, then what it raised.
READ = """
import sys, tilefmm
try:
    tilefmm.read(sys.argv[1])
    print("read")
except tilefmm.FileError as e:
    print("FileError:", e)
"""


def read_in_interpreter(path, **env):
    """tilefmm.read(path) in a fresh interpreter with env added; its
    exit status (negative: the signal that ended it) and stdout."""
    full = dict(os.environ)
    full.update(env)
    p = subprocess.run([sys.executable, "-c", READ, str(path)], env=full,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def tool(name):
    path = os.environ.get(name)
    if not path or not os.path.exists(path):
        pytest.skip(f"${name} is not set (ctest sets it)")
    return path


@pytest.fixture
def seed_file(tmp_path):
    """The undamaged GADGET-4-like seed, in HDF5's earliest format."""
    subprocess.run([tool("TFMM_MAKE_SEEDS"), str(tmp_path)], check=True)
    return tmp_path / "gadget4.hdf5"


@pytest.fixture
def damaged_file(seed_file, tmp_path):
    """The seed with 16 bytes of a dataset's object header zeroed (case
    457 of the fuzz harness's seed 11)."""
    data = bytearray(seed_file.read_bytes())
    assert len(data) > 6721 + 16
    data[6721:6721 + 16] = bytes(16)
    bad = tmp_path / "bad.hdf5"
    bad.write_bytes(bytes(data))
    return bad


def test_a_damaged_file_is_a_file_error(damaged_file):
    code, said = read_in_interpreter(damaged_file)
    assert code == 0, f"the interpreter died (status {code}):\n{said}"
    assert f"FileError: {damaged_file}: " in said, said
    # In process, the same read crashes libhdf5 (where it still does):
    # the child's crash is what the message reports.
    inside, _ = read_in_interpreter(damaged_file,
                                    TILEFMM_READ_ISOLATION="off")
    if inside < 0:
        assert "damaged HDF5 file: the reader crashed (signal" in said, said


def faulty(seed_file, **env):
    """A read of the good seed with H5Fopen replaced by one that crashes
    or loops; skips where the preload does not take."""
    env.update(LD_PRELOAD=tool("TFMM_HDF5_FAULT_LIB"))
    code, said = read_in_interpreter(seed_file, **env)
    if code == 0 and said.startswith("read"):
        pytest.skip("H5Fopen could not be replaced (libhdf5 linked "
                    "statically)")
    return code, said


def test_a_crashing_reader_is_a_file_error(seed_file):
    code, said = faulty(seed_file)
    assert code == 0, f"the interpreter died (status {code}):\n{said}"
    assert (f"FileError: {seed_file}: damaged HDF5 file: the reader crashed "
            f"(signal {int(signal.SIGSEGV)}") in said, said


def test_a_looping_reader_is_cut_off(seed_file):
    code, said = faulty(seed_file, TFMM_HDF5_FAULT="loop",
                        TILEFMM_READ_CPU_LIMIT="1")
    assert code == 0, f"the interpreter died (status {code}):\n{said}"
    assert (f"FileError: {seed_file}: damaged HDF5 file: the reader ran past "
            "its bound of 1 s of CPU time") in said, said


def test_isolation_off_reads_in_process(seed_file):
    code, said = faulty(seed_file, TILEFMM_READ_ISOLATION="off")
    assert code == -signal.SIGSEGV, f"status {code}:\n{said}"


def test_the_child_reads_what_the_process_reads(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n = 1000
    path = tmp_path / "snap.hdf5"
    tilefmm.io.write(path, rng.normal(size=(n, 3)), rng.normal(size=(n, 3)),
                     rng.uniform(0.5, 1.5, n),
                     accelerations=rng.normal(size=(n, 3)),
                     potentials=rng.normal(size=n),
                     bins=rng.integers(0, 8, n).astype(np.int8),
                     parameters={"Gravity:theta": "0.5", "Note": "é ü"},
                     state={"format": "x", "step": "7"}, time=rng.uniform())
    monkeypatch.setenv("TILEFMM_READ_ISOLATION", "off")
    inside = tilefmm.read(path)
    monkeypatch.delenv("TILEFMM_READ_ISOLATION")
    child = tilefmm.read(path)
    for name in ("positions", "velocities", "masses", "ids", "accelerations",
                 "potentials", "bins"):
        a, b = getattr(inside, name), getattr(child, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b), name
        assert b.flags.c_contiguous, name
    for name in ("time", "units", "units_source", "format", "parameters",
                 "state", "note"):
        assert getattr(inside, name) == getattr(child, name), name
    assert child.parameters["Note"] == "é ü"
    assert child.state == {"format": "x", "step": "7"}


def test_a_library_refusal_comes_back_as_itself(tmp_path):
    """The child's refusal is the library's: its status and message."""
    path = tmp_path / "short.hdf5"
    good = tmp_path / "good.hdf5"
    tilefmm.io.write(good, np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]],
                     np.zeros((2, 3)), np.ones(2))
    path.write_bytes(good.read_bytes()[:2048])  # cut short
    with pytest.raises(tilefmm.FileError, match=str(path)):
        tilefmm.read(path)
