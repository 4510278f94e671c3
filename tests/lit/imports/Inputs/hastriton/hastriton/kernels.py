from hastriton.utils import HAS_OTHER, NUM_BACKENDS, tl, triton


@triton.jit
def scale(x_ptr, y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(y_ptr + r, tl.load(x_ptr + r) * (NUM_BACKENDS * 10 + HAS_OTHER))
