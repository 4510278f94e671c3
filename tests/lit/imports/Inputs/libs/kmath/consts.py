# Constants, with __all__ choosing what `from kmath.consts import *` binds.
__all__ = ["ALPHA", "OFFSET"]
ALPHA = 0.25
OFFSET = 100.0
_PRIVATE = 1.0
HIDDEN = 7.0
