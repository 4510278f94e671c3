#!/usr/bin/env python3
# Writes a .tle kernel that calls a chain of N distinct @jit helpers (kernel -> hN-1 -> ... -> h0).
import sys

n = int(sys.argv[1])
print("import triton\nimport triton.language as tl\n")
print("@triton.jit\ndef h0(x):\n    return x + 1\n")
for i in range(1, n):
    print(f"@triton.jit\ndef h{i}(x):\n    return h{i - 1}(x)\n")
print(f"@triton.jit\ndef kernel(p):\n    tl.store(p, h{n - 1}(tl.load(p)))")
