"""Where pip install ./python takes the library from (python/build_library.py):
relative paths from the directory pip was started in, the repository's
build reused, cmake's progress read. pip itself is not run here (a build
takes long); a process started in one directory that runs the resolver in
another stands in for pip and its build."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYTHON_DIR))
import build_library  # noqa: E402


def fake_build(directory, home):
    """A configured CMake build, as far as the resolver looks."""
    directory.mkdir(parents=True)
    (directory / "CMakeCache.txt").write_text(
        "# This is the CMakeCache file.\n"
        f"CMAKE_HOME_DIRECTORY:INTERNAL={home}\n")
    return directory


def test_a_relative_build_dir_is_taken_from_where_pip_started(tmp_path):
    start = tmp_path / "start"
    fake_build(start / "build", tmp_path)
    elsewhere = tmp_path / "copy_of_python"  # where pip runs the build
    elsewhere.mkdir()
    stale = tmp_path / "stale"  # a $PWD the starting process never updated
    fake_build(stale / "build", tmp_path)
    child = ("import sys; sys.path.insert(0, sys.argv[1]); import build_library; "
             "print(build_library.given_build_dir())")
    pip = ("import subprocess, sys; subprocess.run([sys.executable, '-c', sys.argv[1], "
           "sys.argv[2]], cwd=sys.argv[3], check=True)")
    env = dict(os.environ, TILEFMM_BUILD_DIR="build", PWD=str(stale))
    r = subprocess.run([sys.executable, "-c", pip, child, str(PYTHON_DIR), str(elsewhere)],
                       cwd=start, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str((start / "build").resolve())


def test_without_the_parent_pwd_says_where_the_shell_was(tmp_path, monkeypatch):
    monkeypatch.setattr(build_library, "parent_directory", lambda: None)
    fake_build(tmp_path / "b", tmp_path)
    env = {"PWD": str(tmp_path), "TILEFMM_BUILD_DIR": "b"}
    assert build_library.given_build_dir(env, parent=None) == (tmp_path / "b").resolve()
    assert build_library.start_directory({"PWD": "relative/pwd"}, None) == Path.cwd()


def test_an_absolute_path_is_kept(tmp_path):
    build = fake_build(tmp_path / "abs", tmp_path)
    env = {"TILEFMM_BUILD_DIR": str(build), "PWD": "/"}
    assert build_library.given_build_dir(env, parent=Path("/")) == build.resolve()


def test_a_relative_path_that_is_no_build_is_refused_naming_where_it_looked(tmp_path):
    env = {"TILEFMM_BUILD_DIR": "nothing/here"}
    with pytest.raises(SystemExit) as e:
        build_library.given_build_dir(env, parent=tmp_path)
    message = str(e.value)
    assert "TILEFMM_BUILD_DIR=nothing/here" in message
    assert "directory pip was started in: " + str(tmp_path / "nothing" / "here") in message
    assert "no CMakeCache.txt" in message


def test_a_relative_library_is_taken_from_where_pip_started(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libtilefmm.so").write_bytes(b"")
    env = {"TILEFMM_LIBRARY": "lib/libtilefmm.so"}
    assert build_library.given_library(env, parent=tmp_path) == \
        (tmp_path / "lib" / "libtilefmm.so").resolve()
    with pytest.raises(SystemExit, match="no such file"):
        build_library.given_library({"TILEFMM_LIBRARY": "lib/none.so"}, parent=tmp_path)
    assert build_library.given_library({}, parent=tmp_path) is None


def test_the_repositorys_build_is_found_only_when_it_builds_this_repository(tmp_path):
    root = tmp_path / "repo"
    assert build_library.existing_build(root) is None  # no build/ at all
    fake_build(root / "build", root)
    assert build_library.existing_build(root) == (root / "build").resolve()
    other = tmp_path / "other"
    fake_build(other / "build", tmp_path / "elsewhere")
    assert build_library.existing_build(other) is None


def test_cmake_progress_is_read_from_make_and_ninja_lines():
    assert build_library.percent_done("[ 42%] Building C object src/x.c.o") == 42
    assert build_library.percent_done("[100%] Linking C shared library libtilefmm.so") == 100
    assert build_library.percent_done("[12/80] Building C object x.o") == 15
    assert build_library.percent_done("[100%] Built target tilefmm") is None
    assert build_library.percent_done("-- Configuring done") is None
