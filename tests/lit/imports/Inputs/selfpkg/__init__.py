# A package whose __init__ reads its own names through the package (`import selfpkg` inside it
# binds the partially initialised module, as in Python).
import triton
import triton.language as tl
import selfpkg

X = 3.0
Y = selfpkg.X + 1.0
