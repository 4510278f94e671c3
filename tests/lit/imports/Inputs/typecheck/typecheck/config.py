# config -> helpers, whose type-only import points back here.
from typecheck.helpers import SCALE

OFFSET = 1
