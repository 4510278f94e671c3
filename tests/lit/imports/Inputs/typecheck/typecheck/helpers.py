import typing
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typecheck.config import OFFSET
if typing.TYPE_CHECKING:
    from typecheck.config import Missing
    SCALE = 0
else:
    SCALE = 3
