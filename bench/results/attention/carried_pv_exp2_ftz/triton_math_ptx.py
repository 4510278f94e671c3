"""Which PTX math instructions Triton emits for fp32 tl.exp, tl.exp2, tl.log, ... (one line per op, from
the compiled kernel's PTX). Usage: python3 triton_math_ptx.py > triton_math_ptx.txt (needs a GPU)."""
import os, re, torch, triton, triton.language as tl
@triton.jit
def k(x_ptr, o_ptr, OP: tl.constexpr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    if OP == 0: y = tl.exp(x)
    elif OP == 1: y = tl.exp2(x)
    elif OP == 2: y = tl.log(x)
    elif OP == 3: y = tl.log2(x)
    elif OP == 4: y = tl.sqrt(x)
    elif OP == 5: y = tl.rsqrt(x)
    elif OP == 6: y = x / (x + 1.0)
    elif OP == 7: y = tl.sigmoid(x)
    elif OP == 8: y = tl.cos(x)
    else: y = tl.math.exp2(x * 1.4426950408889634)
    tl.store(o_ptr + offs, y)
x = torch.rand(128, device="cuda") + 0.5; o = torch.empty_like(x)
names = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "div", "sigmoid", "cos", "math.exp2"]
for i, n in enumerate(names):
    c = k[(1,)](x, o, OP=i)
    ptx = c.asm["ptx"]
    ops = sorted(set(re.findall(r"\b(?:ex2|lg2|sqrt|rsqrt|div|rcp|cos|sin|mul|fma)\.[a-z0-9.]+", ptx)))
    print(f"{n:10s} {' '.join(ops)}")
