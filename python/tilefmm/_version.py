"""The package's version: the library's (CMakeLists.txt's project VERSION),
which the import checks against tfmm_version()."""

__version__ = "0.1.0"
