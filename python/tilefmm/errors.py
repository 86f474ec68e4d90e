"""The exceptions: one per tfmm_status, each carrying the library's
message. Those about the caller's input are ValueErrors too, so that
`except ValueError` catches them."""


class TilefmmError(Exception):
    """A failure the library reported: .status is the tfmm_status code,
    .status_name its name ("invalid argument", "no GPU", ...), and the
    text is the library's message."""

    def __init__(self, message, status=None, status_name=None):
        super().__init__(message)
        self.status = status
        self.status_name = status_name


class InvalidArgumentError(TilefmmError, ValueError):
    """TFMM_ERR_INVALID_ARGUMENT: a setting or an input is out of range."""


class CoincidentBodiesError(InvalidArgumentError):
    """TFMM_ERR_COINCIDENT: two distinct bodies at one point with eps = 0."""


class OutOfMemoryError(TilefmmError, MemoryError):
    """TFMM_ERR_NO_MEMORY: a host or device allocation failed."""


class NoDeviceError(TilefmmError, RuntimeError):
    """TFMM_ERR_NO_DEVICE: device='gpu' (or schedule='gpu') but no usable GPU."""


class CudaError(TilefmmError, RuntimeError):
    """TFMM_ERR_CUDA: a CUDA call or kernel failed."""


class NonFiniteError(TilefmmError, FloatingPointError):
    """TFMM_ERR_NONFINITE: a computed value is NaN or infinite, or would
    leave double's range (forces so small that they would come out as 0)."""


class UnsupportedError(TilefmmError, RuntimeError):
    """TFMM_ERR_UNSUPPORTED: this build lacks the backend asked for."""


class MpiError(TilefmmError, RuntimeError):
    """TFMM_ERR_MPI: an MPI call failed (a solver over several processes)."""


class FileError(TilefmmError, OSError):
    """TFMM_ERR_FILE: a file cannot be read or written, or is damaged or
    not in its format (the message names the file and what is wrong)."""


class AccuracyError(TilefmmError, RuntimeError):
    """TFMM_ERR_ACCURACY: with verify=True, the evaluation's measured 99th
    percentile of the relative error is above the accuracy target (the
    message names the figure and the setting; the solver's stats hold the
    measurement)."""


BY_STATUS = {
    1: InvalidArgumentError,
    2: OutOfMemoryError,
    3: NoDeviceError,
    4: CudaError,
    5: CoincidentBodiesError,
    6: NonFiniteError,
    7: UnsupportedError,
    8: MpiError,
    9: FileError,
    10: AccuracyError,
}


def raise_status(status, message):
    """Raises the exception of a failed tfmm_status with message."""
    from ._lib import lib

    name = lib.tfmm_status_name(status).decode()
    cls = BY_STATUS.get(status, TilefmmError)
    raise cls(message or name, status, name)
