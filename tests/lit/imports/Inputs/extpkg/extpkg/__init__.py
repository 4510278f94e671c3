# A package importing its compiled extension (SageAttention's `from . import _qattn_sm80`): there
# is no Python source for it, and the compiler does not load extension modules.
from . import _ext
from .ops import scale_kernel, reads_ext  # noqa: F401
