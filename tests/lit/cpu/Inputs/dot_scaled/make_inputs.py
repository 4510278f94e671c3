"""Writes the inputs and expected outputs of tests/lit/cpu/dot_scaled.tle (needs numpy; the .npy
files are committed). Operands are random codes of each format, scales random E8M0 codes near
2 ** 0; the reference decodes them by the OCP MX v1.0 rules and multiplies in float64."""
import numpy as np

M, N, K = 16, 16, 64
rng = np.random.default_rng(7)


def e2m1(code):
    e, m, s = (code >> 1) & 3, code & 1, np.where(code & 8, -1.0, 1.0)
    return s * np.where(e == 0, 0.5 * m, (1 + 0.5 * m) * 2.0 ** (e.astype(np.int64) - 1))


def e4m3(code):
    s, e, m = np.where(code & 0x80, -1.0, 1.0), (code >> 3) & 0xF, code & 7
    return s * np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.int64) - 7))


def e5m2(code):
    s, e, m = np.where(code & 0x80, -1.0, 1.0), (code >> 2) & 0x1F, code & 3
    return s * np.where(e == 0, m / 4 * 2.0 ** -14, (1 + m / 4) * 2.0 ** (e.astype(np.int64) - 15))


def fp8_codes(shape, fmt):
    c = rng.integers(0, 256, shape, dtype=np.uint8)
    if fmt == "e4m3":  # no NaN (S.1111.111)
        c = np.where((c & 0x7F) == 0x7F, c ^ 1, c).astype(np.uint8)
    else:  # no inf / NaN (exponent 11111)
        c = np.where(((c >> 2) & 0x1F) == 0x1F, c ^ 0x40, c).astype(np.uint8)
    return c


def scales(rows):
    return rng.integers(121, 134, (rows, K // 32), dtype=np.uint8)


def scaled(values, s, k_axis):
    f = 2.0 ** (s.astype(np.int64) - 127)
    f = np.repeat(f, 32, axis=1)  # [rows, K]
    return values * (f if k_axis == 1 else f.T)


def save(name, arr):
    np.save(name + ".npy", arr)


# fp8 x fp8: e4m3 lhs [M, K], e5m2 rhs [K, N].
a, b = fp8_codes((M, K), "e4m3"), fp8_codes((K, N), "e5m2")
sa, sb = scales(M), scales(N)
save("f8_a", a), save("f8_b", b), save("f8_sa", sa), save("f8_sb", sb)
save("f8_c", (scaled(e4m3(a), sa, 1) @ scaled(e5m2(b), sb, 0)).astype(np.float32))
# fp4 x fp8: e2m1 lhs [M, K // 2] (two codes to a byte along K, the first in the low nibble),
# e4m3 rhs, the same scales.
codes = rng.integers(0, 16, (M, K), dtype=np.uint8)
packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
b4 = fp8_codes((K, N), "e4m3")
save("f4_a", packed), save("f4_b", b4)
save("f4_c", (scaled(e2m1(codes), sa, 1) @ scaled(e4m3(b4), sb, 0)).astype(np.float32))
# bf16 lhs without scales x e2m1 rhs [K // 2, N] packed along K, with an accumulator of ones.
x = (rng.integers(-64, 64, (M, K)) / 16.0).astype(np.float32)  # exact in bf16
rcodes = rng.integers(0, 16, (K, N), dtype=np.uint8)
save("bf_a", x), save("bf_b", (rcodes[0::2, :] | (rcodes[1::2, :] << 4)).astype(np.uint8))
save("bf_c", (1.0 + x.astype(np.float64) @ scaled(e2m1(rcodes), sb, 0)).astype(np.float32))
