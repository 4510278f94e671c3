# A kernel module of the package: relative imports, the re-export module and a conditional import.
from mylib.triton_utils import tl, triton
from ..utils import BLOCK, twice
from .. import utils
from ..lang import block_offsets
import mylib.lang

try:
    from mylib.fast_math import fast_twice  # no such module: the handler runs
except ImportError:
    fast_twice = utils.twice

SCALE = 100.0  # not the helpers' SCALE: they read their own module's


@triton.jit
def scale_kernel(x_ptr, y_ptr, n):
    offs = block_offsets(BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = utils.twice(twice(x)) + fast_twice(x) + mylib.lang.pid_x()
    tl.store(y_ptr + offs, y, mask=mask)
