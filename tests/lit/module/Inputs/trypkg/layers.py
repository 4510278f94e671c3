DEPTH = 7

from trypkg import ops  # noqa: E402,F401  (trypkg.ops imports DEPTH from this module in turn)
