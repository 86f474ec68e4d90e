"""Where the Python package's libtilefmm comes from, and building it: the
half of setup.py that is not setuptools, kept apart so that the tests can
call it (python/tests/test_build_library.py) without running pip.

Where the library comes from, first match wins:
  TILEFMM_LIBRARY=/path/libtilefmm.so   that file, copied as it is
  TILEFMM_BUILD_DIR=/path/build         an existing CMake build of this
                                        repository: its target tilefmm is
                                        brought up to date and copied (no
                                        second build: CI reuses build/)
  TILEFMM_CMAKE_ARGS="..."              a fresh Release build of the
                                        library alone, with these extra
                                        CMake arguments
  none of them                          the repository's build/ (the one
                                        scripts/main and scripts/test
                                        make) when it is configured, else
                                        a fresh build as above (CUDA when
                                        nvcc is found, as scripts/setup.sh)

A relative path in TILEFMM_LIBRARY or TILEFMM_BUILD_DIR is taken from the
directory pip was started in, as the user typed it there: pip runs this
code in python/ (or a temporary copy of it), never there.

pip shows a build's output only with `pip install -v`: what is said here
goes to stderr, and the notice of a fresh build and its progress also to
the terminal (/dev/tty) when there is one, so that a build of several
minutes is never silent.
"""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

# The message of a fresh build, said before it starts.
FRESH_BUILD_NOTICE = "building the tilefmm library: several minutes on 2 cores"


def say(message, terminal=False):
    """A line on stderr and, with terminal=True, on the terminal too: pip
    captures stderr unless -v."""
    line = f"tilefmm: {message}"
    print(line, file=sys.stderr, flush=True)
    if terminal and not sys.stderr.isatty():
        try:
            with open("/dev/tty", "w") as tty:
                # From the line's start, erased: pip's spinner is there.
                print("\r\033[K" + line, file=tty, flush=True)
        except OSError:
            pass  # no controlling terminal (CI): stderr is all there is


def parent_directory(pid=None):
    """The working directory of the process that started this one (pip,
    whose build runs here with another working directory), or None where
    /proc does not say."""
    try:
        return Path(os.readlink(f"/proc/{pid or os.getppid()}/cwd"))
    except OSError:
        return None


def start_directory(environ=None, parent=None):
    """The directory pip was started in: pip's own working directory (its
    build runs in python/ or a temporary copy, never there), else the
    shell's $PWD, which pip's subprocesses inherit unchanged, else this
    process's working directory. `parent` stands in for pip's directory
    (default: read from /proc)."""
    environ = os.environ if environ is None else environ
    parent = parent_directory() if parent is None else parent
    for candidate in (parent, environ.get("PWD")):
        if candidate and Path(candidate).is_absolute() and Path(candidate).is_dir():
            return Path(candidate)
    return Path.cwd()


def user_path(name, environ=None, parent=None):
    """The path in the environment variable `name`, absolute: a relative
    one is taken from the directory pip was started in. None when unset."""
    environ = os.environ if environ is None else environ
    value = environ.get(name)
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = start_directory(environ, parent) / path
    return path.resolve()


def describe(name, environ, path):
    """How a variable's value became `path`, for a message."""
    value = environ.get(name)
    if Path(value).expanduser().is_absolute():
        return f"{name}={value}"
    return f"{name}={value} (taken from the directory pip was started in: {path})"


def cmake_env():
    """nvcc is usually not on PATH after a toolkit install (setup.sh)."""
    env = dict(os.environ)
    if not shutil.which("nvcc") and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        env["PATH"] = "/usr/local/cuda/bin:" + env.get("PATH", "")
    return env


PROGRESS = re.compile(r"^\[\s*(\d+)%\]|^\[(\d+)/(\d+)\]")


def percent_done(line):
    """The share of a build done, from a line of make ("[ 42%] Building")
    or ninja ("[12/80]"); None for other lines."""
    m = PROGRESS.match(line)
    if not m or "Built target" in line:  # make's lines when up to date
        return None
    if m.group(1) is not None:
        return int(m.group(1))
    return 100 * int(m.group(2)) // max(int(m.group(3)), 1)


def run_cmake(args, show_progress):
    """Runs cmake with its output on stderr (pip install -v shows it) and,
    with show_progress, every tenth of the way on the terminal too."""
    args = [str(a) for a in args]
    say(" ".join(args))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", env=cmake_env())
    shown = 0
    for line in proc.stdout:
        sys.stderr.write(line)
        done = percent_done(line)
        if show_progress and done is not None and done >= shown + 10:
            shown = done - done % 10
            say(f"library build {shown} %", terminal=True)
    if proc.wait() != 0:
        raise SystemExit(f"tilefmm: {' '.join(args)} failed (exit {proc.returncode}); "
                         "pip install -v shows its output")


def library_in(build_dir):
    lib = Path(build_dir) / "src" / "libtilefmm.so"
    if not lib.exists():
        raise SystemExit(f"tilefmm: {lib} not found after building {build_dir}")
    return lib.resolve()


def cache_value(build_dir, key):
    """A CMakeCache.txt entry of a build directory, or None."""
    try:
        text = (Path(build_dir) / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", text, re.MULTILINE)
    return m.group(1) if m else None


def existing_build(root):
    """The repository's build/ (scripts/setup.sh's) when it is a configured
    CMake build of this repository; None otherwise."""
    build_dir = Path(root) / "build"
    home = cache_value(build_dir, "CMAKE_HOME_DIRECTORY")
    if home is None or Path(home).resolve() != Path(root).resolve():
        return None
    return build_dir.resolve()


def update(build_dir, jobs):
    """Brings an existing build's library up to date (nothing if it is)."""
    start = time.monotonic()
    run_cmake(["cmake", "--build", build_dir, "--target", "tilefmm", "-j", jobs],
              show_progress=True)
    return library_in(build_dir), time.monotonic() - start


def given_library(environ=None, parent=None):
    """TILEFMM_LIBRARY as a checked path, or None when unset."""
    environ = os.environ if environ is None else environ
    lib = user_path("TILEFMM_LIBRARY", environ, parent)
    if lib is not None and not lib.is_file():
        raise SystemExit(f"tilefmm: {describe('TILEFMM_LIBRARY', environ, lib)}: "
                         "no such file")
    return lib


def given_build_dir(environ=None, parent=None):
    """TILEFMM_BUILD_DIR as a checked path, or None when unset."""
    environ = os.environ if environ is None else environ
    build_dir = user_path("TILEFMM_BUILD_DIR", environ, parent)
    if build_dir is not None and not (build_dir / "CMakeCache.txt").exists():
        raise SystemExit(f"tilefmm: {describe('TILEFMM_BUILD_DIR', environ, build_dir)} "
                         "is not a configured CMake build (no CMakeCache.txt)")
    return build_dir


def build_library(root, temp):
    """The library, built (or brought up to date) by CMake."""
    jobs = str(os.cpu_count() or 1)
    root = Path(root)
    build_dir = given_build_dir()
    if build_dir is not None:
        say(f"using the build in {build_dir} (TILEFMM_BUILD_DIR)")
        return update(build_dir, jobs)[0]
    if not (root / "CMakeLists.txt").exists() or not (root / "include" / "tilefmm.h").exists():
        raise SystemExit(
            f"tilefmm: the repository is not at {root}: the package builds "
            "from a checkout (pip install ./python), not from an sdist; set "
            "TILEFMM_SOURCE_DIR, TILEFMM_BUILD_DIR or TILEFMM_LIBRARY")
    extra = shlex.split(os.environ.get("TILEFMM_CMAKE_ARGS", ""))
    found = None if "TILEFMM_CMAKE_ARGS" in os.environ else existing_build(root)
    if found is not None:
        say(f"reusing the build in {found} (TILEFMM_CMAKE_ARGS builds afresh, "
            "TILEFMM_BUILD_DIR names another)", terminal=True)
        return update(found, jobs)[0]
    # One build directory per set of extra arguments: a cached setting of
    # an earlier build (TILEFMM_CUDA=OFF, say) never leaks into this one.
    key = hashlib.sha256("\0".join(extra).encode()).hexdigest()[:10]
    build_dir = Path(temp).resolve() / f"cmake-{key}"
    say(f"{FRESH_BUILD_NOTICE} (in {build_dir}; pip install -v shows cmake's "
        "output; TILEFMM_BUILD_DIR=DIR reuses a build)", terminal=True)
    start = time.monotonic()
    run_cmake(["cmake", "-S", root, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
               "-DTILEFMM_TESTS=OFF", "-DTILEFMM_BENCH=OFF"] + extra,
              show_progress=False)
    lib, _ = update(build_dir, jobs)
    say(f"library built in {time.monotonic() - start:.0f} s", terminal=True)
    return lib
