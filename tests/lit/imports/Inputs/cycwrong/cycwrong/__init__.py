# The package imports its config first, which asks for an optional part of the package while the
# package is still running (FlagGems' flag_gems/config.py and its compiled extension).
from cycwrong.config import HAS_EXT  # noqa: F401
from cycwrong.ops import *  # noqa: F401,F403
