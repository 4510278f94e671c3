from .constants import *
from .jit_helpers import *
