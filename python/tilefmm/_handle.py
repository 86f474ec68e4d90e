"""What a Python object over one of the library's opaque handles shares:
release on close() (or at the end of a with block, or when collected),
and a clear error when used after that."""


class Handle:
    """Subclasses set _destroy (the library's tfmm_*_destroy) and _what
    ("the solver"), and keep the handle in self._handle."""

    _handle = None

    def close(self):
        """Releases the handle (and the GPU memory it holds)."""
        if getattr(self, "_handle", None):
            type(self)._destroy(self._handle)
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # the interpreter shutting down: modules gone
            pass

    def _live(self):
        if not self._handle:
            raise ValueError(f"{self._what} is closed")
        return self._handle
