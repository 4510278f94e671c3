# A helper library found through tle_add_kernels' INCLUDE_DIRS.
from .scale import FACTOR, scaled
