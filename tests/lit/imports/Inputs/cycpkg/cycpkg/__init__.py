# A genuine import cycle through a package: ops asks for LATER, which this file binds only after
# importing ops (tests/lit/imports/package_extension.tle).
from .ops import kernel  # noqa: F401

LATER = 3
