# Whether Triton is usable, as engines check before they import it: find_spec, the backends'
# count and their active drivers, and a value the compiler cannot compute inside the same `try`
# (no ImportError: the handler does not run).
import os
from importlib.util import find_spec

HAS_TRITON = find_spec("triton") is not None or find_spec("no_such_module_here") is not None
HAS_OTHER = find_spec("no_such_module_here") is not None
if HAS_TRITON:
    try:
        from triton.backends import backends

        NUM_BACKENDS = len(backends)
        HOSTNAME = os.uname()
        active = [b.driver for b in backends.values() if b.driver and b.driver.is_active()]
        if NUM_BACKENDS == 0 or len(active) != 1:
            HAS_TRITON = False
    except ImportError:
        HAS_TRITON = False

if HAS_TRITON:
    import triton
    import triton.language as tl
else:
    triton = None
    tl = None
