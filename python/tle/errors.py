"""The bridge's exceptions: compile failures, refused arguments and runtime (driver) failures."""


class TleError(Exception):
    """Base class of every error the bridge raises itself."""


class CompileError(TleError):
    """tlec refused the kernel or failed; the message is tlec's diagnostic text (file:line:col)."""

    def __init__(self, message, command=None):
        super().__init__(message)
        #: the tlec command line that failed (a list of strings), when there was one
        self.command = command


class ArgumentError(TleError, TypeError, ValueError):
    """A launch refused before the driver saw it: wrong count, a tensor for a scalar, a dtype that
    is not the parameter's, an integer outside its type's range or not keeping a divisibility
    promise, a bad grid or keyword. Both `except TypeError` and `except ValueError` catch it."""


class RuntimeLibraryError(TleError, RuntimeError):
    """libtle_rt failed (its message, e.g. the driver call and CUresult) or could not be loaded.

    `status` is the C ABI's tle_rt_status (1 no driver, 2 driver, 3 metadata, 4 invalid argument,
    5 other), or None when the library itself could not be found or opened."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class NoDriverError(RuntimeLibraryError):
    """No usable CUDA driver or device (TLE_RT_ERROR_NO_DRIVER)."""
