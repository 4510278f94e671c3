# A second kmath on the search path: found only when listed first.
ALPHA = 0.5
OFFSET = 200.0
__all__ = ["ALPHA", "OFFSET"]
