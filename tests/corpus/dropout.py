"""Dropout and random-number kernels: a dropout driven by a mask tensor, a seeded dropout that
regenerates its mask from (seed, offset) with tl.rand so that nothing is stored for backward,
Gaussian noise with tl.randn / tl.randn4x, and raw Philox words for a sampler."""
import torch

import triton
import triton.language as tl


@triton.jit
def masked_dropout_kernel(x_ptr, keep_ptr, out_ptr, n, p, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = i < n
    x = tl.load(x_ptr + i, mask=inb)
    keep = tl.load(keep_ptr + i, mask=inb)  # an int1 tensor: True where the element survives
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + i, out, mask=inb)


@triton.jit
def seeded_dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = i < n
    x = tl.load(x_ptr + i, mask=inb)
    # the same (seed, i) always gives the same number: backward recomputes the mask
    u = tl.rand(seed, i)
    keep = u > p
    scale = 1.0 / (1.0 - p)
    tl.store(out_ptr + i, tl.where(keep, x * scale, 0.0).to(out_ptr.dtype.element_ty), mask=inb)


@triton.jit
def gaussian_noise_kernel(x_ptr, out_ptr, n, sigma, seed, BLOCK: tl.constexpr, FOUR_PER_CALL: tl.constexpr):
    # x + sigma * N(0, 1); with FOUR_PER_CALL each Philox call gives four normals, so a program
    # fills 4 * BLOCK elements, otherwise BLOCK
    pid = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    if FOUR_PER_CALL:
        z0, z1, z2, z3 = tl.randn4x(seed, pid * BLOCK + j)
        for q in tl.static_range(4):
            if q == 0:
                z = z0
            elif q == 1:
                z = z1
            elif q == 2:
                z = z2
            else:
                z = z3
            i = pid * 4 * BLOCK + q * BLOCK + j
            m = i < n
            x = tl.load(x_ptr + i, mask=m, other=0.0)
            tl.store(out_ptr + i, x + sigma * z, mask=m)
    else:
        i = pid * BLOCK + j
        m = i < n
        x = tl.load(x_ptr + i, mask=m, other=0.0)
        tl.store(out_ptr + i, x + sigma * tl.randn(seed, i), mask=m)


@triton.jit
def philox_words_kernel(out_ptr, u_ptr, seed, offset, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    # Raw counter-based random words and the uniform / normal maps built on them.
    pid = tl.program_id(0)
    c0 = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.uint32) + offset.to(tl.uint32)
    zero = tl.zeros_like(c0)
    r0, r1, r2, r3 = tl.philox(seed, c0, zero, zero, zero, n_rounds=N_ROUNDS)
    w0, w1, w2, w3 = tl.randint4x(seed, c0.to(tl.int32), n_rounds=N_ROUNDS)
    single = tl.randint(seed, c0.to(tl.int32))
    mixed = (r0 ^ w1) + (r1 ^ w0) + (r2 | w2) + (r3 & w3) + single.to(tl.uint32)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), mixed)
    u1 = tl.uint_to_uniform_float(r0)
    u2 = tl.uint_to_uniform_float(r1)
    n1, n2 = tl.pair_uniform_to_normal(u1, u2)
    a, b, c, d = tl.rand4x(seed, c0.to(tl.int32))
    tl.store(u_ptr + pid * BLOCK + tl.arange(0, BLOCK), n1 + n2 + a * b - c * d)


def seeded_dropout(x, p, seed):
    out = torch.empty_like(x)
    n = x.numel()
    seeded_dropout_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, out, n, p, seed, BLOCK=1024)
    return out


if __name__ == "__main__":
    x = torch.randn(10_000, device="cuda")
    a = seeded_dropout(x, 0.5, 123)
    b = seeded_dropout(x, 0.5, 123)
    assert torch.equal(a, b)
    print((a == 0).float().mean())
