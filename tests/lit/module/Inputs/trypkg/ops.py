import triton
import triton.language as tl

from trypkg.layers import DEPTH


def _device():
    try:
        return triton.runtime.driver.active.get_current_target().backend
    except Exception:
        return "cpu"


def _checked(n):
    try:
        if n > 3:
            raise ValueError("big")
        r = n
    except (KeyError, ValueError):
        r = -1
    else:
        r = r * 10
    finally:
        r = r + 1
    return r


IS_NV = _device() == "cuda"
ARCH = triton.runtime.driver.active.get_current_target().arch
A = _checked(2)
B = _checked(5)


@triton.constexpr_function
def pick(n):
    try:
        if n > 3:
            raise KeyError(n)
        return n
    except KeyError:
        return 100


@triton.constexpr_function
def unguarded(n):
    try:
        raise RuntimeError(f"n={n}")
    except KeyError:
        return 0


@triton.jit
def k(o, N: tl.constexpr, BAD: tl.constexpr):
    if BAD:
        tl.store(o, unguarded(N))
    tl.store(o, A * 10000 + B * 1000 + DEPTH * 100 + IS_NV * ARCH + pick(N))
