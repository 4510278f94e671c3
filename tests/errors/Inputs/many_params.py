#!/usr/bin/env python3
# Writes a .tle kernel with N fp32 pointer parameters (annotated) that stores to each.
import sys

n = int(sys.argv[1])
print("import triton\nimport triton.language as tl\n\n\n@triton.jit")
print("def kernel(" + ", ".join(f"p{i}: tl.pointer_type(tl.float32)" for i in range(n)) + "):")
for i in range(n):
    print(f"    tl.store(p{i}, 1.0)")
