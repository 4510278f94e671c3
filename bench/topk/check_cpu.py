#!/usr/bin/env python3
"""Checks bench/topk/topk.tle's plain-Triton kernel (topk_radix) on tlec's CPU target: small rows
with ties, negative zeros, infinities, per-row valid ranges (empty, shorter than K, offset) run
through tle-run, and every row's index set compared with a reference computed here in pure
Python (the K largest of the valid range, ties to the lowest index, -1 padding), exactly.

Usage: check_cpu.py TLE_RUN WORK_DIR
Prints one 'ok' line per case and 'topk cpu checks passed'; exits 1 at the first mismatch."""
import os
import random
import struct
import subprocess
import sys

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topk.tle")


def write_npy(path, fmt, shape, values):
    """A C-order .npy file of `values` (fmt: 'f4' or 'i4', little-endian)."""
    header = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        fmt, "".join(f"{d}, " for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    code = "f" if fmt == "f4" else "i"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}{code}", *values))


def read_npy_i4(path):
    """The int32 values of a .npy file tle-run wrote."""
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return list(struct.unpack(f"<{len(body) // 4}i", body))


def desc_key(v):
    """The kernel's key: ascending order = the fp32 values' descending order (+0 before -0)."""
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    return bits if bits >> 31 else bits ^ 0x7FFFFFFF


def reference(row, start, end, k):
    """Indices of the k largest of row[start:end], ties to the lowest index, padded with -1."""
    cols = sorted(range(max(start, 0), max(end, start)), key=lambda c: (desc_key(row[c]), c))[:k]
    return sorted(cols) + [-1] * (k - len(cols))


def make_rows(rows, n, seed):
    """fp32 rows (as Python floats exactly representable in fp32) with many repeated values."""
    rng = random.Random(seed)
    out = []
    for r in range(rows):
        kind = r % 4
        row = []
        for _ in range(n):
            if kind == 0:
                v = rng.gauss(0.0, 1.0)
            elif kind == 1:  # few distinct values: ties decide the selection
                v = float(rng.randint(-3, 3))
            elif kind == 2:
                v = rng.choice([0.0, -0.0, 1.5, float("inf"), float("-inf"), rng.uniform(-1e30, 1e30)])
            else:  # one value everywhere: every pass lands in one bin
                v = 0.25
            row.append(struct.unpack("<f", struct.pack("<f", v))[0])
        out.append(row)
    return out


def run_case(tle_run, work, name, rows, n, k, block, radix, ranges, seed):
    x = make_rows(rows, n, seed)
    starts = [s for s, _ in ranges]
    ends = [e for _, e in ranges]
    paths = {p: os.path.join(work, f"{name}_{p}.npy") for p in ("x", "starts", "ends", "out")}
    write_npy(paths["x"], "f4", (rows, n), [v for row in x for v in row])
    write_npy(paths["starts"], "i4", (rows,), starts)
    write_npy(paths["ends"], "i4", (rows,), ends)
    nb = 1 << radix
    npass = (32 + radix - 1) // radix
    cmd = [tle_run, KERNEL, "-n", "topk_radix", "-s",
           f"*fp32:16, *i32, *i32, *i32:16, *i32:16, i32, {k}, {block}, {radix}",
           "--grid", str(rows), "--arg", "x_ptr=" + paths["x"], "--arg", "starts_ptr=" + paths["starts"],
           "--arg", "ends_ptr=" + paths["ends"], "--arg", f"out_ptr=full:7:i32:{rows}x{k}",
           "--arg", f"hist_ptr=full:5:i32:{rows}x{npass * nb}", "--arg", f"stride_x={n}",
           "--save", "out_ptr=" + paths["out"], "--check-bounds", "-q"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"FAIL {name}: tle-run exited {res.returncode}\n{res.stdout}{res.stderr}")
        return False
    out = read_npy_i4(paths["out"])
    for r in range(rows):
        got = sorted(out[r * k:(r + 1) * k])
        got = [g for g in got if g >= 0] + [g for g in got if g < 0]
        want = reference(x[r], starts[r], ends[r], k)
        want = [w for w in want if w >= 0] + [w for w in want if w < 0]
        if got != want:
            print(f"FAIL {name}: row {r} (range {ranges[r]}): got {got} want {want}")
            return False
    print(f"ok {name}: {rows} rows of {n}, k={k}, BLOCK={block}, RADIX={radix}")
    return True


def main():
    tle_run, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    cases = [
        # name, rows, n, k, BLOCK, RADIX, [start, end) per row
        ("full_r8", 4, 1000, 64, 256, 8, [(0, 1000)] * 4),
        ("ranges_r11", 8, 1500, 128, 512, 11,
         [(0, 1500), (100, 1100), (7, 1499), (0, 128), (300, 350), (500, 500), (1400, 1500), (0, 129)]),
        ("k_is_n", 4, 256, 256, 128, 8, [(0, 256), (0, 255), (1, 256), (0, 0)]),
        ("small_block", 4, 700, 32, 64, 11, [(3, 700), (0, 700), (650, 690), (10, 43)]),
        # Ranges that fit one BLOCK: the keys are read once and kept (rows 0 and 2 do not fit).
        ("in_regs_r11", 4, 1200, 128, 1024, 11, [(0, 1200), (100, 1124), (0, 1025), (5, 700)]),
        ("in_regs_r8", 4, 512, 64, 512, 8, [(0, 512), (1, 512), (0, 64), (511, 512)]),
    ]
    ok = all(run_case(tle_run, work, *case, seed=i) for i, case in enumerate(cases))
    if ok:
        print("topk cpu checks passed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
