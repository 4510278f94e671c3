"""Runs the kernels of shape_scan.tle (and atomics.tle, math.tle, inline_asm.tle, descriptors.tle, dot_kn.tle,
shared_buffers.tle, store_masks.tle, and the tile IR of gpuops_copy.tir, gpuops_tma.tir, gpuops_wgmma.tir, gpuops_ws.tir and gpuops_pipeline.tir) on the GPU with tle-run and checks them against NumPy;
the tl.gather kernels of tests/lit/cpu/run_gather.tle against the CPU target's results, bit for bit,
and the Inductor-form kernels of tests/lit/imports/inductor_helpers.tle against the CPU target's.
Usage: python3 check_ops.py TLE_RUN [WORKDIR]; prints one PASS/FAIL line per case and
'N passed, M failed'; exits 1 on failure, 77 with 'SKIPPED: <reason>' when tle-run finds no GPU."""
import os
import subprocess
import sys

TLE_RUN = sys.argv[1]
WORK = sys.argv[2] if len(sys.argv) > 2 else "/tmp/tle-ops"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "shape_scan.tle")
GATHER = os.path.join(HERE, "..", "..", "lit", "cpu", "run_gather.tle")


def gpu_missing():
    """tle-run's reason when it finds no usable GPU here, else None (a one-element kernel run)."""
    p = subprocess.run([TLE_RUN, GATHER, "-n", "gather_long", "-D", "N=16", "--target", "gpu", "-q",
                        "--arg", "out_ptr=zeros:f32:16", "--arg", "ok_ptr=zeros:i32:1"], capture_output=True, text=True)
    return p.stderr.strip() if p.returncode != 0 and "needs a CUDA GPU" in p.stderr else None


if (reason := gpu_missing()) is not None:
    print("SKIPPED: " + reason)
    sys.exit(77)

import numpy as np  # noqa: E402 - after the skip, which needs no NumPy

os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(7)
results = []


def run(kernel, sig, args, saves, warps=4, grid_override=None, src=None):
    cmd = [TLE_RUN, src or SRC, "-n", kernel, "-s", sig, "-w", str(warps), "--target", "gpu", "-q"]
    if grid_override:
        cmd += ["--grid", str(grid_override)]
    return launch(cmd, kernel, args, saves)


def launch(cmd, tag, args, saves):
    """Runs tle-run command `cmd` with `args` (numbers, or arrays passed as .npy files named after
    `tag`) and returns the arrays of the `saves` arguments after the run."""
    for name, arr in args.items():
        if isinstance(arr, (int, float)):
            cmd += ["--arg", f"{name}={arr}"]
            continue
        path = os.path.join(WORK, f"{tag}_{name}.npy")
        np.save(path, arr)
        cmd += ["--arg", f"{name}={path}"]
    out = {}
    for name in saves:
        path = os.path.join(WORK, f"{tag}_{name}_out.npy")
        cmd += ["--save", f"{name}={path}"]
        out[name] = path
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or p.stdout.strip())
    return {k: np.load(v) for k, v in out.items()}

def case(name, fn):
    try:
        ok, detail = fn()
    except Exception as e:  # noqa: BLE001 - report and continue
        ok, detail = False, str(e)
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name}  {detail}")


def close(got, want, rtol=1e-5, atol=1e-6):
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
    return bool(np.allclose(got, want, rtol=rtol, atol=atol)), f"max_abs={err:.3e}"


def t_trans(warps):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    o = run("trans2d", "*fp32:16, *fp32:16, 32, 64", {"x_ptr": x, "y_ptr": np.full((64, 32), np.nan, np.float32)},
            ["y_ptr"], warps)
    return close(o["y_ptr"], x.T)


def t_permute():
    x = rng.standard_normal((4, 8, 16)).astype(np.float32)
    o = run("permute3d", "*fp32:16, *fp32:16, 4, 8, 16", {"x_ptr": x, "y_ptr": np.full((16, 4, 8), np.nan, np.float32)},
            ["y_ptr"])
    return close(o["y_ptr"], np.transpose(x, (2, 0, 1)))


def t_reshape():
    x = rng.standard_normal(32 * 64).astype(np.float32)
    o = run("reshape2d", "*fp32:16, *fp32:16, 32, 64", {"x_ptr": x, "y_ptr": np.full((64, 32), np.nan, np.float32)},
            ["y_ptr"])
    return close(o["y_ptr"], x.reshape(64, 32) * 2)


def t_cat_join_split():
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    nan = lambda *s: np.full(s, np.nan, np.float32)  # noqa: E731
    o = run("cat_join_split", "*fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, 64",
            {"a_ptr": a, "b_ptr": b, "cat_ptr": nan(128), "join_ptr": nan(64, 2), "s0_ptr": nan(64), "s1_ptr": nan(64)},
            ["cat_ptr", "join_ptr", "s0_ptr", "s1_ptr"])
    oks = [close(o["cat_ptr"], np.concatenate([a, b]))[0], close(o["join_ptr"], np.stack([a, b], -1))[0],
           close(o["s0_ptr"], a * 3)[0], close(o["s1_ptr"], b * 3)[0]]
    return all(oks), f"cat/join/split/split = {oks}"


def t_split_join_fp16():
    x = rng.standard_normal((64, 128)).astype(np.float16)
    o = run("split_join_fp16", "*fp16:16, *fp16:16, *fp16:16",
            {"x_ptr": x, "y_ptr": np.full((64, 64), np.nan, np.float16), "z_ptr": np.full((64, 128), np.nan, np.float16)},
            ["y_ptr", "z_ptr"])
    a, b = x[:, 0::2], x[:, 1::2]
    z = np.stack([a * np.float16(2), b], -1).reshape(64, 128)
    oks = [bool(np.array_equal(o["y_ptr"], a - b)), bool(np.array_equal(o["z_ptr"], z))]
    return all(oks), f"split/join = {oks}"


def t_batched_dot(batches, warps):
    a = (rng.standard_normal((batches, 16, 32)) * 0.5).astype(np.float16)
    b = (rng.standard_normal((batches, 32, 16)) * 0.5).astype(np.float16)
    o = run("batched_dot", f"*fp16:16, *fp16:16, *fp32:16, {batches}",
            {"a_ptr": a, "b_ptr": b, "c_ptr": np.full((batches, 16, 16), np.nan, np.float32)}, ["c_ptr"], warps)
    return close(o["c_ptr"], np.matmul(a.astype(np.float64), b.astype(np.float64)), rtol=1e-3, atol=1e-3)


def t_scans(warps):
    x = (rng.standard_normal(1024) * 0.5 + 1.0).astype(np.float32)
    m = rng.integers(-100, 100, size=(16, 128)).astype(np.int32)
    nan = np.full(1024, np.nan, np.float32)
    o = run("scans", "*fp32:16, *fp32:16, *fp32:16, *fp32:16, *i32:16, *i32:16, 1024, 16, 128",
            {"x_ptr": x, "y_ptr": nan, "z_ptr": nan, "w_ptr": nan, "i_ptr": m, "o_ptr": np.zeros_like(m)},
            ["y_ptr", "z_ptr", "w_ptr", "o_ptr"], warps)
    x64 = x.astype(np.float64)
    small = np.where(np.arange(1024) < 16, x64, 1.0)
    oks = [close(o["y_ptr"], np.cumsum(x64), rtol=1e-4, atol=1e-3)[0],
           close(o["z_ptr"], np.cumsum(x64[::-1])[::-1], rtol=1e-4, atol=1e-3)[0],
           close(o["w_ptr"], np.cumprod(small), rtol=1e-4)[0],
           bool(np.array_equal(o["o_ptr"], np.cumsum(m, axis=1, dtype=np.int64).astype(np.int32)))]
    return all(oks), f"cumsum/reverse/cumprod/int-axis1 = {oks}"


ATOMICS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "atomics.tle")


def t_hist():
    n = 5000
    idx = rng.integers(0, 37, size=n).astype(np.int32)
    o = run("hist", "*i32:16, *i32:16, *i32:16, i32, 256", {"idx_ptr": idx, "bins_ptr": np.zeros(37, np.int32),
            "old_ptr": np.full(n, -1, np.int32), "n": n}, ["bins_ptr", "old_ptr"], grid_override=(n + 255) // 256,
            src=ATOMICS)
    want = np.bincount(idx, minlength=37).astype(np.int32)
    # Every old value is distinct per bin and together they are 0..count-1.
    olds_ok = all(sorted(o["old_ptr"][idx == b].tolist()) == list(range(want[b])) for b in range(37))
    return bool(np.array_equal(o["bins_ptr"], want)) and olds_ok, f"bins_equal={np.array_equal(o['bins_ptr'], want)} olds_ok={olds_ok}"


def t_fminmax():
    n = 3000
    x = rng.standard_normal(n).astype(np.float32) * 10
    o = run("fminmax", "*fp32:16, *fp32:16, *fp32:16, *fp32:16, i32, 128",
            {"x_ptr": x, "mx_ptr": np.full(4, -np.inf, np.float32), "mn_ptr": np.full(4, np.inf, np.float32),
             "fsum_ptr": np.zeros(1, np.float32), "n": n}, ["mx_ptr", "mn_ptr", "fsum_ptr"],
            grid_override=(n + 127) // 128, src=ATOMICS)
    mx = np.array([x[i::4].max() for i in range(4)], np.float32)
    mn = np.array([x[i::4].min() for i in range(4)], np.float32)
    ok = np.array_equal(o["mx_ptr"], mx) and np.array_equal(o["mn_ptr"], mn) and \
        abs(float(o["fsum_ptr"][0]) - float(x.astype(np.float64).sum())) < 1e-2
    return bool(ok), f"max={o['mx_ptr']} want={mx} sum={o['fsum_ptr'][0]:.4f} want={x.astype(np.float64).sum():.4f}"


def t_cas():
    progs = 64
    o = run("cas_xchg", "*i32:16, *i32:16, 4", {"lock_ptr": np.zeros(3, np.int32), "out_ptr": np.full(progs, -1, np.int32)},
            ["out_ptr", "lock_ptr"], grid_override=progs, src=ATOMICS)
    won = o["out_ptr"]
    # Exactly one program saw 0; all others saw the winner's pid + 1.
    winners = np.flatnonzero(won == 0)
    ok = len(winners) == 1 and np.all(won[won != 0] == winners[0] + 1) and o["lock_ptr"][0] == winners[0] + 1
    return bool(ok), f"winners={winners.tolist()} lock={o['lock_ptr'].tolist()}"


MATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "math.tle")


def t_math32():
    import math
    x = (rng.standard_normal(256) * 2).astype(np.float32)
    names = ["sin_ptr", "tanh_ptr", "erf_ptr", "pow_ptr", "sig_ptr", "fma_ptr", "floor_ptr"]
    args = {"x_ptr": x}
    args.update({n: np.full(256, np.nan, np.float32) for n in names})
    o = run("math32", "*fp32:16, " + ", ".join(["*fp32:16"] * 7) + ", 256", args, names, src=MATH)
    x64 = x.astype(np.float64)
    want = {"sin_ptr": np.sin(x64), "tanh_ptr": np.tanh(x64), "erf_ptr": np.array([math.erf(v) for v in x64]),
            "pow_ptr": np.abs(x64) ** 1.5, "sig_ptr": 1 / (1 + np.exp(-x64)), "fma_ptr": x64 * x64 + 1,
            "floor_ptr": np.floor(x64)}
    bad = [n for n in names if not np.allclose(o[n], want[n], rtol=2e-6, atol=2e-6)]
    return not bad, f"mismatches={bad}"


def t_math64():
    d = rng.standard_normal(128)
    o = run("math64", "*fp64:16, *fp64:16, 128", {"d_ptr": d, "e_ptr": np.full(128, np.nan)}, ["e_ptr"], src=MATH)
    return close(o["e_ptr"], np.exp(d) + np.log(np.abs(d) + 1) + np.sqrt(np.abs(d)), rtol=1e-14, atol=1e-14)


ASM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inline_asm.tle")


def t_inline_asm_wide(warps):
    n = 1024
    f = rng.standard_normal(n).astype(np.float32)
    h = rng.standard_normal(n).astype(np.float16)
    o = run("asm_wide_pack", "*fp32:16, *fp16:16, *fp32:16, *fp16:16, 1024",
            {"f_ptr": f, "h_ptr": h, "o_f": np.zeros(n, np.float32), "o_h": np.zeros(n, np.float16)},
            ["o_f", "o_h"], warps, src=ASM)
    # Element i of each group of 4 (the thread's consecutive registers): 2f, f + 3, 2f, f * f.
    g = f.reshape(-1, 4)
    want_f = np.stack([2 * g[:, 0], g[:, 1] + 3, 2 * g[:, 2], g[:, 3] * g[:, 3]], 1).reshape(-1)
    hg = h.reshape(-1, 4)
    want_h = np.stack([2 * hg[:, 0], 2 * hg[:, 1], hg[:, 2], hg[:, 3]], 1).reshape(-1)
    ok_f, why_f = close(o["o_f"], want_f, rtol=1e-6, atol=1e-6)
    ok_h, why_h = close(o["o_h"].astype(np.float32), want_h.astype(np.float32), rtol=1e-3, atol=1e-3)
    return ok_f and ok_h, f"fp32 {why_f}, fp16 {why_h}"


def t_inline_asm_narrow(warps):
    n = 1024
    x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    s = rng.integers(-128, 128, n, dtype=np.int8)
    o = run("asm_narrow_regs", "*i32:16, *i8:16, *u8:16, *i32:16, 1024",
            {"x_ptr": x, "s_ptr": s, "o_b": np.zeros(4 * n, np.uint8), "o_w": np.zeros(n, np.int32)},
            ["o_b", "o_w"], warps, src=ASM)
    want_b = x.view(np.uint8)  # little-endian: byte k of x[i] at 4 i + k
    bad = int(np.sum(o["o_b"] != want_b)) + int(np.sum(o["o_w"] != s.astype(np.int32) * 3))
    return not bad, f"mismatches={bad}"


def t_inline_asm(warps):
    n = 1024
    x = rng.integers(-2**30, 2**30, n, dtype=np.int32)
    y = rng.integers(-2**30, 2**30, n, dtype=np.int32)
    f = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    b = rng.integers(0, 256, n, dtype=np.uint8)
    h = rng.standard_normal(n).astype(np.float16)
    k = np.array([3], dtype=np.int32)
    outs = {"o_sum": np.zeros(n, np.int32), "o_diff": np.zeros(n, np.int32), "o_fadd": np.zeros(n, np.float32),
            "o_bnot": np.zeros(n, np.uint8), "o_hadd": np.zeros(n, np.float16), "o_shift": np.zeros(n, np.int32)}
    sig = "*i32:16, *i32:16, *fp32:16, *fp32:16, *u8:16, *fp16:16, *i32, " + ", ".join(["*i32:16"] * 2) + \
        ", *fp32:16, *u8:16, *fp16:16, *i32:16, 1024"
    args = {"x_ptr": x, "y_ptr": y, "f_ptr": f, "g_ptr": g, "b_ptr": b, "h_ptr": h, "k_ptr": k}
    args.update(outs)
    o = run("asm_ops", sig, args, list(outs), warps, src=ASM)
    with np.errstate(over="ignore"):
        want = {"o_sum": x + y, "o_diff": x - y, "o_fadd": f + g, "o_bnot": ~b, "o_hadd": h + h,
                "o_shift": (x.astype(np.int64) << 3).astype(np.int32)}
    bad = [k for k in want if not np.array_equal(o[k], want[k])]
    return not bad, "mismatch in " + ", ".join(bad) if bad else "exact"


case("libdevice fp32: sin, tanh, erf, pow, sigmoid, fma, floor", t_math32)
case("libdevice fp64: exp, log, sqrt", t_math64)
def t_histograms(dtype, n, bins, warps):
    """tl.histogram with and without a mask, 3 programs, values from -7 to bins + 6 (outside
    [0, bins) not counted), against np.bincount."""
    x = rng.integers(-7, bins + 7, size=(3, n))
    np_t = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u16": np.uint16}[dtype]
    if dtype.startswith("u"):
        x = np.abs(x)
    limit = n - n // 5
    o = run("histograms", f"*{dtype}:16, *i32:16, *i32:16, {n}, {bins}, {limit}",
            {"x_ptr": x.astype(np_t), "h_ptr": np.full((3, bins), -1, np.int32),
             "hm_ptr": np.full((3, bins), -1, np.int32)}, ["h_ptr", "hm_ptr"], warps, grid_override="3")

    def count(v):
        v = v[(v >= 0) & (v < bins)]
        return np.bincount(v, minlength=bins).astype(np.int32)
    want = np.stack([count(r) for r in x])
    want_m = np.stack([count(r[:limit]) for r in x])
    bad = int(np.sum(o["h_ptr"] != want)) + int(np.sum(o["hm_ptr"] != want_m))
    return bad == 0, f"{bad} bins differ"


# Shared-memory atomics (n * bins > 64 per thread) for all but the last, which compares.
for dt, n, bins, w in (("i32", 8192, 256, 4), ("i8", 4096, 64, 8), ("i64", 2048, 512, 4), ("u16", 1024, 128, 1),
                       ("i16", 256, 8, 4)):
    case(f"tl.histogram {dt} {n} values, {bins} bins, with and without a mask, {w} warps",
         lambda dt=dt, n=n, bins=bins, w=w: t_histograms(dt, n, bins, w))
def t_histogram_loop():
    n, m, bins = 10000, 4096, 256
    x = rng.integers(-5, 300, size=n).astype(np.int32)
    o = run("histogram_loop", f"*i32:16, *i32:16, i32, {m}, {bins}",
            {"x_ptr": x, "h_ptr": np.full(bins, -1, np.int32), "n": n}, ["h_ptr"], 4, grid_override="1")
    v = x[(x >= 0) & (x < bins)]
    want = (np.bincount(v, minlength=bins) + np.bincount(x[:m] & 15, minlength=bins)).astype(np.int32)
    bad = int(np.sum(o["h_ptr"] != want))
    return bad == 0, f"{bad} bins differ"


case("tl.histogram in a loop (3 blocks of 4096, the last masked) and in a branch, 256 bins", t_histogram_loop)


NARROW = os.path.join(HERE, "..", "..", "lit", "run", "histogram_narrow.tle")


def t_histogram_narrow():
    """uint8 / int8 values with 256 and 512 bins (bin numbers past the type's range)."""
    o = run("hist8", "*i32:16, *i32:16, *i32:16, 512",
            {"u_ptr": np.zeros(256, np.int32), "w_ptr": np.zeros(512, np.int32), "s_ptr": np.zeros(256, np.int32)},
            ["u_ptr", "w_ptr", "s_ptr"], 4, grid_override="1", src=NARROW)
    u = ((np.arange(512) * 7) % 256).astype(np.uint8)
    s = u.view(np.int8).astype(np.int64)
    want = {"u_ptr": np.bincount(u, minlength=256), "w_ptr": np.bincount(u, minlength=512),
            "s_ptr": np.bincount(s[s >= 0], minlength=256)}
    bad = sum(int(np.sum(o[k] != want[k].astype(np.int32))) for k in want)
    return bad == 0, f"{bad} bins differ"


case("tl.histogram of uint8 / int8 values, 256 and 512 bins (bins past the type's range)", t_histogram_narrow)
case("atomic_add histogram with duplicate indices, old values", t_hist)
case("atomic_max/min fp32 (negative values), scalar atomic_add of a reduction", t_fminmax)
case("atomic_cas elects one program, atomic_xchg", t_cas)
for w in (1, 4, 8):
    case(f"trans 32x64 num_warps={w}", lambda: t_trans(w))
case("permute (2,0,1) 4x8x16", t_permute)
case("reshape 2048 -> 64x32", t_reshape)
case("cat / join / split", t_cat_join_split)
case("split / join of [64, 128] fp16 (16-byte staged vectors)", t_split_join_fp16)
for bt, w in ((4, 4), (64, 4), (64, 1)):
    case(f"batched dot [{bt}, 16, 32] @ [{bt}, 32, 16] fp16, {w} warps", lambda bt=bt, w=w: t_batched_dot(bt, w))
for w in (1, 4):
    case(f"cumsum, reverse cumsum, cumprod, int cumsum axis 1, num_warps={w}", lambda: t_scans(w))
for w in (1, 4):
    case(f"inline_asm_elementwise: two results, f registers, packed u8 x 4 and fp16 x 2, a scalar operand ({w} warps)",
         lambda w=w: t_inline_asm(w))
    case(f"inline_asm_elementwise pack=4: fp32 a register each, fp16 two to a register ({w} warps)",
         lambda w=w: t_inline_asm_wide(w))
    case(f"inline_asm_elementwise pack=1: uint8 results and an int8 operand in 32-bit registers ({w} warps)",
         lambda w=w: t_inline_asm_narrow(w))
DESC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "descriptors.tle")
# fp8 e4m3 bytes of exactly representable values (NumPy has no fp8): 0, +-0.5, +-1, +-2.
FP8_CODES = np.array([0x00, 0x30, 0xB0, 0x38, 0xB8, 0x40, 0xC0], np.uint8)
FP8_VALUES = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0])


def t_desc_mm(kernel, bm, bn, bk, warps):
    # M, N, K multiples of 16 (the signature's promises) but not of the blocks: out-of-bounds
    # parts of tiles read as zeros.
    m, n, k = 208, 304, 400
    a = (rng.standard_normal((m, k)) * 0.5).astype(np.float16)
    b = (rng.standard_normal((k, n)) * 0.5).astype(np.float16)
    grid = f"{(m + bm - 1) // bm},{(n + bn - 1) // bn}"
    o = run(kernel, f"*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:16, {bm}, {bn}, {bk}",
            {"a_ptr": a, "b_ptr": b, "c_ptr": np.full((m, n), np.nan, np.float32), "M": m, "N": n, "K": k,
             "stride_a": k, "stride_b": n}, ["c_ptr"], warps, grid_override=grid, src=DESC)
    want = a.astype(np.float64) @ b.astype(np.float64)
    return close(o["c_ptr"], want, rtol=1e-3, atol=1e-2)


def t_desc_mm8():
    m, n, k = 208, 304, 400
    ia = rng.integers(0, len(FP8_CODES), (m, k))
    ib = rng.integers(0, len(FP8_CODES), (n, k))
    o = run("desc_mm8", "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, 128, 128, 128",
            {"a_ptr": FP8_CODES[ia], "bt_ptr": FP8_CODES[ib], "c_ptr": np.full((m, n), np.nan, np.float16),
             "M": m, "N": n, "K": k, "stride_a": k, "stride_b": k}, ["c_ptr"], 8, grid_override="2,3", src=DESC)
    want = FP8_VALUES[ia] @ FP8_VALUES[ib].T
    # fp16 output (spacing 0.5 near 1000) of fp8 products added by the tensor cores.
    return close(o["c_ptr"], want, rtol=2e-3, atol=0.5)


case("tensor-descriptor matmul fp16 64x128x64 (TMA on sm_90a), ragged M, N, K", lambda: t_desc_mm("desc_mm", 64, 128, 64, 4))
case("tensor-descriptor matmul fp16 128x128x64, 8 warps, num_stages=1 (one slot per operand)",
     lambda: t_desc_mm("desc_mm_unpipelined", 128, 128, 64, 8))
case("tensor-descriptor matmul fp8 e4m3, B transposed, 128x128x128, 8 warps (TMA on sm_90a)", t_desc_mm8)


def t_desc_loop(kernel, bn):
    # 64 row blocks of 32 over 3 programs: each program's TMA stores reuse their staging area
    # while the loop's reduction or scan uses shared memory in every iteration.
    m, n, bm = 2048, bn, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    o = run(kernel, f"*fp32:16, *fp32:16, i32:16, i32:16, {bm}, {bn}",
            {"x_ptr": x, "y_ptr": np.full((m, n), np.nan, np.float32), "M": m, "N": n}, ["y_ptr"], 4,
            grid_override="3", src=DESC)
    blocks = x.astype(np.float64).reshape(m // bm, bm, n)
    if kernel == "desc_loop_center":
        want = blocks - blocks.sum(axis=1, keepdims=True)
    else:
        want = np.cumsum(blocks, axis=1)
    return close(o["y_ptr"], want.reshape(m, n), rtol=1e-4, atol=1e-4)


case("descriptor store in a loop after a column reduction, 32x64 blocks, 3 programs (TMA store on sm_90a)",
     lambda: t_desc_loop("desc_loop_center", 64))
case("descriptor store in a loop after a cumsum, 32x128 blocks, 3 programs (TMA store on sm_90a)",
     lambda: t_desc_loop("desc_loop_cumsum", 128))
DOT_KN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dot_kn.tle")


def t_mm_kn(dtype):
    # M, N, K multiples of 16 but not of the blocks; B given as [K, N].
    m, n, k = 208, 304, 400
    if dtype == "i8":
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        av, bv, out, sig = a, b, np.full((m, n), -1, np.int32), "*i8:16, *i8:16, *i32:16"
    else:
        ia = rng.integers(0, len(FP8_CODES), (m, k))
        ib = rng.integers(0, len(FP8_CODES), (k, n))
        a, b, av, bv = FP8_CODES[ia], FP8_CODES[ib], FP8_VALUES[ia], FP8_VALUES[ib]
        out, sig = np.full((m, n), np.nan, np.float32), "*fp8e4nv:16, *fp8e4nv:16, *fp32:16"
    o = run("mm_kn", sig + ", i32:16, i32:16, i32:16, 64, 128, 64",
            {"a_ptr": a, "b_ptr": b, "c_ptr": out, "M": m, "N": n, "K": k}, ["c_ptr"], 4,
            grid_override=f"{(m + 63) // 64},{(n + 127) // 128}", src=DOT_KN)
    want = av.astype(np.float64) @ bv.astype(np.float64)
    if dtype == "i8":
        return close(o["c_ptr"].astype(np.float64), want, rtol=0, atol=0)
    # Sums of at most 400 products of {0, +-0.25, ..., +-4}: exact in fp32, up to the fp8
    # wgmma's narrower accumulation (a few ulps of the running sum).
    return close(o["c_ptr"], want, rtol=1e-3, atol=1e-2)


case("int8 matmul with B given as [K, N] (restaged K-major on sm_90a), ragged M, N, K", lambda: t_mm_kn("i8"))
case("fp8 e4m3 matmul with B given as [K, N] (restaged K-major on sm_90a), ragged M, N, K", lambda: t_mm_kn("fp8"))
def t_mm_ieee():
    m, n, k = 208, 304, 400
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    o = run("mm_ieee", "*fp32:16, *fp32:16, *fp32:16, i32:16, i32:16, i32:16, 128, 128, 32",
            {"a_ptr": a, "b_ptr": b, "c_ptr": np.full((m, n), np.nan, np.float32), "M": m, "N": n, "K": k},
            ["c_ptr"], 4, grid_override=f"{(m + 127) // 128},{(n + 127) // 128}", src=DOT_KN)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 products and sums of 400 terms of magnitude ~1: within 1e-4 of the exact sum.
    return close(o["c_ptr"], want, rtol=1e-5, atol=1e-4)


case("fp32 matmul in IEEE precision (FMA), 128x128x32 over 4 warps, ragged M, N, K", t_mm_ieee)


def t_mm_small(dtype, m, n, k, warps):
    # M or N below 16: the operands padded with zeros to a tensor-core tile, the corner kept.
    npt = {"fp16": np.float16, "fp32": np.float32}[dtype]
    a = rng.standard_normal((m, k)).astype(npt)
    b = rng.standard_normal((k, n)).astype(npt)
    c = rng.standard_normal((m, n)).astype(np.float32)
    o = run("mm_small", f"*{dtype}:16, *{dtype}:16, *fp32:16, {m}, {n}, {k}", {"a_ptr": a, "b_ptr": b, "c_ptr": c},
            ["c_ptr"], warps, src=DOT_KN)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    return close(o["c_ptr"], want, rtol=1e-2, atol=1e-2)


for dt, m, n, k, w in (("fp16", 64, 1, 128, 4), ("fp16", 64, 8, 64, 8), ("fp32", 2, 32, 32, 4), ("fp16", 1, 1, 16, 1)):
    case(f"dot with a small side: {dt} [{m}, {k}] @ [{k}, {n}], {w} warps",
         lambda dt=dt, m=m, n=n, k=k, w=w: t_mm_small(dt, m, n, k, w))
SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shared_buffers.tle")


def t_reverse_smem():
    x = rng.standard_normal(1024).astype(np.float32)
    o = run("reverse_smem", "*fp32:16, *fp32:16, 1024", {"x_ptr": x, "y_ptr": np.full(1024, np.nan, np.float32)},
            ["y_ptr"], 4, src=SHARED)
    return close(o["y_ptr"], x[::-1], rtol=0, atol=0)


def t_rotate_smem():
    x = rng.standard_normal(256).astype(np.float32)
    o = run("rotate_smem", "*fp32:16, *fp32:16, i32, 256",
            {"x_ptr": x, "y_ptr": np.full(256, np.nan, np.float32), "steps": 37}, ["y_ptr"], 8, src=SHARED)
    return close(o["y_ptr"], np.roll(x, -37), rtol=0, atol=0)


def t_histogram_smem():
    x = rng.integers(0, 64, size=(3, 4096)).astype(np.int32)
    o = run("histogram_smem", "*i32:16, *i32:16, 4096, 64",
            {"x_ptr": x, "out_ptr": np.full((3, 64), -1, np.int32)}, ["out_ptr"], 4, grid_override="3", src=SHARED)
    want = np.stack([np.bincount(r, minlength=64) for r in x]).astype(np.int32)
    return bool(np.array_equal(o["out_ptr"], want)), f"{int(np.sum(o['out_ptr'] != want))} bins differ"


def t_cluster_sum():
    x = rng.standard_normal((5 * 4, 512)).astype(np.float32)
    o = run("cluster_sum", "*fp32:16, *fp32:16, 512",
            {"x_ptr": x, "out_ptr": np.full((5, 512), np.nan, np.float32)}, ["out_ptr"], 4, grid_override="20",
            src=SHARED)
    return close(o["out_ptr"], x.reshape(5, 4, 512).astype(np.float64).sum(1), rtol=1e-6, atol=1e-5)


def t_cluster_histogram():
    # Skewed values (most in a few bins, some past the last bin, masked off): 3 per value.
    x = np.minimum(np.abs(rng.standard_normal((3 * 4, 2048)) * 3), 40).astype(np.int32)
    o = run("cluster_histogram", "*i32:16, *i64:16, 2048, 32",
            {"x_ptr": x, "out_ptr": np.full((3, 32), -1, np.int64)}, ["out_ptr"], 4, grid_override="12", src=SHARED)
    want = np.stack([3 * np.bincount(r[r < 32], minlength=32) for r in x.reshape(3, 4 * 2048)]).astype(np.int64)
    return bool(np.array_equal(o["out_ptr"], want)), f"{int(np.sum(o['out_ptr'] != want))} bins differ"


STRAIGHT = os.path.join(HERE, "..", "..", "lit", "passes", "pipeline_straight_line_budget.tle")


def t_straight_line_dots():
    """Liger's fused matmul + RMS norm with K = 4096 in 16 unrolled dots: the first operands in
    pipeline slots, the rest register loads once the slots would not fit."""
    n, k, m = 64, 4096, 32
    x = (rng.standard_normal((n, k)) * 0.5).astype(np.float16)
    w = (rng.standard_normal((k, m)) * 0.05).astype(np.float16)
    o = run("mm_norm", f"*fp16:16, *fp16:16, *fp32:16, {n}, {k}, {m}, 32, 256, 32",
            {"x_ptr": x, "w_ptr": w, "out_ptr": np.zeros((n, m), np.float32)}, ["out_ptr"], 4, grid_override="2,1",
            src=STRAIGHT)
    xf = x.astype(np.float64)
    want = (xf @ w.astype(np.float64)) / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6)
    return close(o["out_ptr"], want, rtol=2e-3, atol=2e-3)


def t_cluster_swap():
    o = run("cluster_swap", "*i32:16, 128", {"out_ptr": np.full((12, 128), -1, np.int32)}, ["out_ptr"], 4,
            grid_override="12", src=SHARED)
    want = np.zeros((12, 128), np.int32)
    for pid in range(12):
        base, y, x = pid - pid % 4, (pid % 4) // 2, pid % 2
        # pid reads CTA (1 - y, x), which holds what CTA (1 - y, 1 - x) wrote there
        writer = base + (1 - y) * 2 + (1 - x)
        want[pid] = writer * 1000 + np.arange(128)
    return bool(np.array_equal(o["out_ptr"], want)), f"{int(np.sum(o['out_ptr'] != want))} elements differ"


def t_dot_from_buffers(dtype, k):
    """A dot of operands read from NVMMA buffers live across a loop, staged in rounds of K
    (allocate-shared's stage_k: the whole staging would not fit), exact on small integers."""
    a = rng.integers(-3, 4, size=(64, k))
    b = rng.integers(-3, 4, size=(64, k))
    np_in, np_out, sig = ((np.float16, np.float32, "*fp16:16, *fp16:16, *fp32:16") if dtype == "fp16"
                          else (np.int8, np.int32, "*i8:16, *i8:16, *i32:16"))
    o = run("dot_from_buffers", f"{sig}, 64, 64, {k}, 2",
            {"a_ptr": a.astype(np_in), "b_ptr": b.astype(np_in), "c_ptr": np.zeros((64, 64), np_out)}, ["c_ptr"], 8,
            grid_override="1", src=SHARED)
    want = (2 * a @ b.T).astype(np_out)
    return bool(np.array_equal(o["c_ptr"], want)), f"{int(np.sum(o['c_ptr'] != want))} elements differ"


case("dot of buffers live across a loop, staged in rounds of K (stage_k): fp16 64x64x512, 8 warps",
     lambda: t_dot_from_buffers("fp16", 512))
case("dot of buffers live across a loop, staged in rounds of K (stage_k): int8 64x64x1024, 8 warps",
     lambda: t_dot_from_buffers("i8", 1024))
case("shared buffer: store, then load another thread's element (reversal), 1024 fp32", t_reverse_smem)
case("shared buffer: load then store in a runtime loop (37 rotations), 256 fp32, 8 warps", t_rotate_smem)
case("shared buffer: zero fill, then shared atomics (64-bin histogram of 4096 int32), 3 programs",
     t_histogram_smem)
case("cluster of 4: atomics into rank 0's buffer through distributed shared memory, 5 clusters", t_cluster_sum)
case("16 unrolled dots (K = 4096) past the pipeline slot budget: slots, then register loads", t_straight_line_dots)
case("cluster of 4: skewed i64 histogram into rank 0's bins (remote adds of a constant, masked), 3 clusters",
     t_cluster_histogram)
case("cluster of 2 x 2: stores and loads addressed by runtime (y, x) coordinates, 3 clusters", t_cluster_swap)


def t_grid_normalize():
    x = rng.uniform(0.5, 1.5, 512 * 256).astype(np.float32)
    o = run("grid_normalize", "*fp32:16, *fp32:16, *fp32, 256",
            {"x_ptr": x, "y_ptr": np.full(512 * 256, np.nan, np.float32), "sum_ptr": np.zeros(1, np.float32)},
            ["y_ptr"], 4, grid_override="512", src=SHARED)
    return close(o["y_ptr"], x / x.astype(np.float64).sum(), rtol=1e-4, atol=1e-9)


def t_grid_rotate():
    n, block = 512, 128
    o = run("grid_rotate", "*i32:16, *i32:16, 128",
            {"buf_ptr": np.full(n * block, -1, np.int32), "out_ptr": np.full(n * block, -1, np.int32)},
            ["out_ptr"], 4, grid_override=str(n), src=SHARED)
    p = np.arange(n)[:, None]
    want = (2 * (((p + 3) % n) * block + np.arange(block))).astype(np.int32).reshape(-1)
    return bool(np.array_equal(o["out_ptr"], want)), f"{int(np.sum(o['out_ptr'] != want))} elements differ"


def t_grid_too_large():
    # 10^6 CTAs cannot all be resident: refused before the launch, naming the limit.
    try:
        run("grid_rotate", "*i32:16, *i32:16, 128",
            {"buf_ptr": np.zeros(128, np.int32), "out_ptr": np.zeros(128, np.int32)}, ["out_ptr"], 4,
            grid_override="1000000", src=SHARED)
    except RuntimeError as e:
        ok = "a cooperative launch" in str(e) and "exceeds the" in str(e)
        return ok, str(e).splitlines()[-1][:160]
    return False, "launched"


case("grid barrier: one total over 512 CTAs (atomics, then every CTA reads it), cooperative launch",
     t_grid_normalize)
case("grid barrier: three in a row between phases reading other CTAs' writes, 512 CTAs", t_grid_rotate)
case("grid barrier: 10^6 CTAs are refused before the launch (not co-resident)", t_grid_too_large)
MASKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_masks.tle")
POISON = np.float32(-12345.0)


def t_row_scale(n, sig_n):
    rows, stride = 6, 1024
    x = rng.uniform(0.5, 1.5, (rows, stride)).astype(np.float32)
    o = run("row_scale", f"*fp32:16, *fp32:16, {sig_n}, i32:16, 1024",
            {"x_ptr": x, "y_ptr": np.full((rows, stride), POISON), "n": n, "stride": stride}, ["y_ptr"], 4,
            grid_override=str(rows), src=MASKS)
    want = np.full((rows, stride), POISON)
    want[:, :n] = x[:, :n] / x[:, :n].astype(np.float64).sum(1, keepdims=True)
    return close(o["y_ptr"], want)


def t_swapped_le():
    n, base, size = 1000, 24, 1280
    x = rng.standard_normal(size).astype(np.float32)
    o = run("swapped_le", "*fp32:16, *fp32:16, i32, i32, 256",
            {"x_ptr": x, "y_ptr": np.full(size, POISON), "n": n, "base": base}, ["y_ptr"], 4, grid_override="4",
            src=MASKS)
    want = np.full(size, POISON)
    for pid in range(4):
        idx = base + pid * 256 + np.arange(256)
        idx = idx[idx < n]
        if idx.size:
            want[idx] = x[idx] - x[idx].max()
    return close(o["y_ptr"], want)


def t_replicated():
    x = rng.standard_normal(32).astype(np.float32)
    o = run("replicated", "*fp32:16, *fp32:16, i32, 32", {"x_ptr": x, "y_ptr": np.full(32, POISON), "n": 27},
            ["y_ptr"], 4, grid_override="1", src=MASKS)
    want = np.full(32, POISON)
    want[:27] = x[:27] * np.sum(x[:27].astype(np.float64) ** 2)
    return close(o["y_ptr"], want, rtol=1e-5, atol=1e-5)


def t_loop_rows():
    rows, stride, n = 5, 512, 333
    x = rng.standard_normal((rows, stride)).astype(np.float32)
    o = run("loop_rows", "*fp32:16, *fp32:16, i32, i32, i32:16, 512",
            {"x_ptr": x, "y_ptr": np.full((rows, stride), POISON), "n": n, "rows": rows, "stride": stride}, ["y_ptr"],
            4, grid_override="1", src=MASKS)
    want = np.full((rows, stride), POISON)
    want[:, :n] = x[:, :n] - x[:, :n].max(1, keepdims=True)
    return close(o["y_ptr"], want)


def t_window():
    x = rng.standard_normal(256).astype(np.float32)
    o = run("window", "*fp32:16, *fp32:16, i32, i32, 256", {"x_ptr": x, "y_ptr": np.full(256, POISON), "lo": 17,
            "hi": 201}, ["y_ptr"], 4, grid_override="1", src=MASKS)
    want = np.full(256, POISON)
    want[17:201] = x[17:201] + x[17:201].astype(np.float64).sum()
    return close(o["y_ptr"], want, rtol=1e-5, atol=1e-5)


case("store mask after a reduction: rows of 1024, n = 1008 (i32:16 hint, 16-byte stores)",
     lambda: t_row_scale(1008, "i32:16"))
case("store mask after a reduction: rows of 1024, n = 777 (scalar stores)", lambda: t_row_scale(777, "i32"))
case("store mask after a reduction: n = 0 (nothing stored)", lambda: t_row_scale(0, "i32"))
case("store mask n >= idx + 1 with a runtime base, 4 programs, some past n", t_swapped_le)
case("store mask in a layout replicated over 4 warps (32 elements), n = 27", t_replicated)
case("store mask from before a runtime loop, 5 rows of 333 in 512", t_loop_rows)
case("store mask of another form (lo <= cols < hi) after a reduction", t_window)

def run_tir(name, args, saves):
    """Runs the hand-written tile IR tests/gpu/ops/NAME.tir (its signature and warps are its own)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".tir")
    return launch([TLE_RUN, src, "--target", "gpu", "-q"], name, args, saves)


def t_gpuops_copy():
    x = rng.standard_normal(512).astype(np.float32)
    o = run_tir("gpuops_copy", {"x": x, "y": np.full(1024, np.nan, np.float32), "n": 256}, ["y"])
    want = np.concatenate([x[:256], np.zeros(256, np.float32), x])
    return close(o["y"], want, rtol=0, atol=0)


def t_gpuops_tma():
    a = rng.standard_normal(128 * 64).astype(np.float16)
    o = run_tir("gpuops_tma", {"a": a, "y": np.zeros(4096, np.float16), "z": np.zeros(8192, np.float16), "r": 32},
                ["y", "z"])
    want_z = np.zeros(8192, np.float16)
    want_z[2048:6144] = a[2048:6144]
    ok_y, d_y = close(o["y"], a[2048:6144], rtol=0, atol=0)
    ok_z, d_z = close(o["z"], want_z, rtol=0, atol=0)
    return ok_y and ok_z, f"y {d_y}, z {d_z}"


case("tile IR cp.async: masked async_copy completing on an mbarrier (zero fill), vec=8 copy and group wait",
     t_gpuops_copy)
case("tile IR TMA: tma_load of a declared tensor map on an mbarrier, tma_store of another, bulk-group wait",
     t_gpuops_tma)

def t_gpuops_wgmma():
    a = rng.standard_normal(64 * 64).astype(np.float16)
    b = rng.standard_normal(64 * 64).astype(np.float16)
    o = run_tir("gpuops_wgmma", {"a": a, "b": b, "c": np.full(4096, np.nan, np.float32),
                                 "d": np.full(4096, np.nan, np.float32), "y": np.zeros(4096, np.float16)}, ["c", "d", "y"])
    A, B = a.reshape(64, 64).astype(np.float32), b.reshape(64, 64).astype(np.float32)
    ok_c, d_c = close(o["c"], (A @ B).ravel(), rtol=1e-3, atol=1e-2)
    ok_d, d_d = close(o["d"], (A @ B.T).ravel(), rtol=1e-3, atol=1e-2)
    ok_y, d_y = close(o["y"], a, rtol=0, atol=0)
    return ok_c and ok_d and ok_y, f"c {d_c}, d {d_d}, y {d_y}"


def t_gpuops_ws():
    a = rng.standard_normal(128 * 64).astype(np.float16)
    o = run_tir("gpuops_ws", {"a": a, "y": np.zeros(4096, np.float16), "r": 32}, ["y"])
    return close(o["y"], a[2048:6144], rtol=0, atol=0)


def t_gpuops_pipeline(k):
    a = rng.standard_normal(64 * k).astype(np.float16)
    b = rng.standard_normal(k * 64).astype(np.float16)
    o = run_tir("gpuops_pipeline", {"a": a, "b": b, "c": np.full(4096, np.nan, np.float32), "K": k}, ["c"])
    want = a.reshape(64, k).astype(np.float32) @ b.reshape(k, 64).astype(np.float32)
    return close(o["c"], want.ravel(), rtol=1e-3, atol=2e-2)


case("tile IR wgmma: local_store into swizzled buffers, a @ b and a @ b^T (trans_b) in two groups, local_load back",
     t_gpuops_wgmma)
case("tile IR warp_specialize: a worker warpgroup's TMA load (128-byte swizzle) on an mbarrier, the default "
     "partition's local_load, setmaxnreg budgets", t_gpuops_ws)

case("tile IR pipelined GEMM: TMA into two slots on mbarriers, wgmma per slot, K = 64 (one iteration)",
     lambda: t_gpuops_pipeline(64))
case("tile IR pipelined GEMM: TMA into two slots on mbarriers, wgmma per slot, K = 512 (phases flip)",
     lambda: t_gpuops_pipeline(512))


# tl.gather (one `gather` op: the source through shared memory, one read per index) against the
# CPU target's direct reads: the same kernel, inputs and outputs on both, compared bit for bit
# (-0.0, NaN payloads, fp8 and bool included; indices outside the axis give 0 on both).
def gather_both(kernel, sig, defines, args, saves, warps=4):
    outs = {}
    for target in ("cpu", "gpu"):
        cmd = [TLE_RUN, GATHER, "-n", kernel, "-w", str(warps), "--target", target, "-q"]
        cmd += ["-s", sig] if sig else []
        for d in defines:
            cmd += ["-D", d]
        outs[target] = launch(cmd, f"gather_{kernel}_{target}", args, saves)
    same = [bool(np.array_equal(outs["cpu"][k].view(np.uint8), outs["gpu"][k].view(np.uint8))) for k in saves]
    return all(same), f"bit-identical to the cpu target: {same}"


GATHER_BITS = [  # (DT, UT, NB, SNAN, IT) as tests/lit/cpu/run_gather.tle runs them
    ("tl.float32", "tl.uint32", 32, 2139095041, "tl.int32"), ("tl.float16", "tl.uint16", 16, 31745, "tl.int64"),
    ("tl.bfloat16", "tl.uint16", 16, 32641, "tl.uint8"), ("tl.float64", "tl.uint64", 64, 9218868437227405313, "tl.int16"),
    ("tl.float8e4nv", "tl.uint8", 8, 127, "tl.int8"), ("tl.float8e5", "tl.uint8", 8, 125, "tl.uint32"),
    ("tl.int8", "tl.uint8", 8, 125, "tl.uint64"), ("tl.int16", "tl.uint16", 16, 31745, "tl.uint16"),
    ("tl.uint32", "tl.uint32", 32, 2139095041, "tl.int32"), ("tl.int64", "tl.uint64", 64, 1, "tl.int16"),
    ("tl.int1", "tl.uint8", 8, 1, "tl.int32")]


def t_gather_bits(dt, ut, nb, snan, it, warps):
    out = np.zeros(16, {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[nb])
    return gather_both("gather_bits", None, [f"DT={dt}", f"UT={ut}", f"NB={nb}", f"SNAN={snan}", f"IT={it}"],
                       {"out_ptr": out}, ["out_ptr"], warps)


def t_gather_load(sig_t, np_t, it, np_it, m, n, k, axis, warps):
    """Random source bits ([m, n]: NaNs with payloads, signed zeros) and random indices from -3 to
    the axis' size + 2 (unsigned: 0 to size + 2) of index type `it`."""
    size = (m, n)[axis]
    if np_t == np.bool_:
        src = rng.integers(0, 2, size=(m, n)).astype(np.bool_)
    else:
        bits = rng.integers(0, 256, size=(m, n, np.dtype(np_t).itemsize), dtype=np.uint8)
        src = bits.view(np_t).reshape(m, n)
    shape = (k, n) if axis == 0 else (m, k)
    lo = 0 if np.dtype(np_it).kind == "u" else -3
    idx = rng.integers(lo, size + 3, size=shape).astype(np_it)
    return gather_both("gather_load", f"*{sig_t}, *{it}, *{sig_t}, {m}, {n}, {k}, {axis}",
                       [], {"src_ptr": src, "idx_ptr": idx, "out_ptr": np.zeros(shape, src.dtype)}, ["out_ptr"], warps)


for w in (1, 4):
    for dt, ut, nb, snan, it in GATHER_BITS:
        case(f"gather {dt} bits (-0.0, NaN payloads) by {it} indices, 3 outside, {w} warps",
             lambda a=(dt, ut, nb, snan, it), w=w: t_gather_bits(*a, w))
for it in ("tl.int32", "tl.uint16"):
    case(f"gather rank 2 along axis 0 ([8, 4] by [16, 4]) and -1 ([8, 4] by [8, 2]), {it} indices",
         lambda it=it: gather_both("gather_2d", None, [f"IT={it}"],
                                   {"out0_ptr": np.zeros((16, 4), np.float32), "out1_ptr": np.zeros((8, 2), np.float32)},
                                   ["out0_ptr", "out1_ptr"]))
for n, w in ((1024, 4), (1024, 8), (4096, 4)):
    case(f"gather a {n}-element row by {n} indices (-32 to n + 31), {w} warps",
         lambda n=n, w=w: gather_both("gather_long", None, [f"N={n}"],
                                      {"out_ptr": np.zeros(n, np.float32), "ok_ptr": np.zeros(1, np.int32)},
                                      ["out_ptr", "ok_ptr"], w))
GATHER_LOADS = [  # (signature dtype, NumPy dtype of its bits, index dtype, NumPy's, M, N, K, axis, warps)
    ("fp32", np.float32, "i32", np.int32, 32, 64, 16, 0, 4), ("fp32", np.float32, "i64", np.int64, 32, 64, 128, 1, 4),
    ("fp16", np.float16, "i64", np.int64, 8, 1024, 1024, 1, 8), ("bf16", np.uint16, "u8", np.uint8, 64, 16, 32, 0, 4),
    ("fp8e4nv", np.uint8, "i16", np.int16, 16, 32, 8, 1, 4), ("fp64", np.float64, "u32", np.uint32, 16, 16, 16, 0, 2),
    ("i1", np.bool_, "i32", np.int32, 4, 128, 64, 1, 4), ("i64", np.int64, "i8", np.int8, 2, 64, 64, 1, 1)]
for a in GATHER_LOADS:
    case(f"gather loaded [{a[4]}, {a[5]}] {a[0]} along axis {a[7]} by {a[2]} indices (K = {a[6]}), {a[8]} warps",
         lambda a=a: t_gather_load(*a))

# Kernels in the form PyTorch's Inductor generates, with torch's triton_helpers built into the
# compiler (tests/lit/imports/inductor_helpers.tle, whose CPU results that test checks): the GPU's
# results against the CPU target's (NaN where it has NaN; libdevice's last-bit differences).
INDUCTOR = os.path.join(HERE, "..", "..", "lit", "imports", "inductor_helpers.tle")
INDUCTOR_CASES = [  # (kernel, signature, grid, {name: tle-run --arg spec}, saved outputs)
    ("red_welford", "*fp32, *fp32, i32, i32, 2, 64", "2",
     {"in_out_ptr0": "zeros:fp32:4", "out_ptr0": "zeros:fp32:4", "xnumel": "4", "r0_numel": "100"},
     ["out_ptr0", "in_out_ptr0"]),
    ("per_argmax", "*i64, *fp32, *fp32, i32, i32, 4", "1",
     {"out_ptr0": "zeros:i64:4", "out_ptr1": "zeros:fp32:4", "out_ptr2": "zeros:fp32:4", "xnumel": "4",
      "r0_numel": "100"}, ["out_ptr0", "out_ptr1", "out_ptr2"]),
    ("poi_int", "*i64, i32, 16", "1", {"out_ptr0": "zeros:i64:16", "xnumel": "16"}, ["out_ptr0"]),
    ("red_online_softmax", "*fp32, *fp32, 4", "1", {"out_ptr0": "zeros:fp32:4", "out_ptr1": "zeros:fp32:4"},
     ["out_ptr0", "out_ptr1"]),
    ("per_sort", "*fp32, *i16, *fp32, 4", "1",
     {"out_ptr0": "zeros:fp32:32", "out_ptr1": "zeros:i16:32", "out_ptr2": "zeros:fp32:4"},
     ["out_ptr0", "out_ptr1", "out_ptr2"]),
    ("poi_bucketize", "*fp32, *i64, 8", "1", {"in_ptr1": "zeros:fp32:4", "out_ptr0": "zeros:i64:16"}, ["out_ptr0"]),
    ("spl_prefix", "*fp32, *i64, *u8, *u8, 64", "4",
     {"out_ptr0": "zeros:fp32:4", "out_ptr1": "zeros:i64:4", "ws_ptr": "zeros:u8:64", "ws64_ptr": "zeros:u8:128"},
     ["out_ptr0", "out_ptr1"]),
    ("poi_logical", "*i32, 8, tl.uint16", "1", {"out_ptr0": "zeros:i32:17"}, ["out_ptr0"]),
    ("poi_frexp", "*fp32, *i32, *fp64, *i32, *i32, *i32", "2",
     {"out_ptr0": "zeros:fp32:8", "out_ptr1": "zeros:i32:8", "out_ptr2": "zeros:fp64:8", "out_ptr3": "zeros:i32:8",
      "sem_ptr": "zeros:i32:1", "flag_ptr": "zeros:i32:2"}, ["out_ptr0", "out_ptr1", "out_ptr2", "out_ptr3", "flag_ptr"]),
]


def t_inductor(kernel, sig, grid, args, saves, source=INDUCTOR):
    outs = {}
    for target in ("cpu", "gpu"):
        cmd = [TLE_RUN, source, "-n", kernel, "-s", sig, "--grid", grid, "--target", target, "-q"]
        for name, spec in args.items():
            cmd += ["--arg", f"{name}={spec}"]
        paths = {k: os.path.join(WORK, f"inductor_{kernel}_{k}_{target}.npy") for k in saves}
        for k, path in paths.items():
            cmd += ["--save", f"{k}={path}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip() or p.stdout.strip())
        outs[target] = {k: np.load(path) for k, path in paths.items()}
    same = [bool(np.allclose(outs["gpu"][k], outs["cpu"][k], rtol=1e-5, atol=1e-6, equal_nan=True)) for k in saves]
    return all(same), f"as the cpu target: {same}"


for a in INDUCTOR_CASES:
    case(f"Inductor-form kernel {a[0]} (built-in triton_helpers) against the cpu target", lambda a=a: t_inductor(*a))

# libdevice's typed functions (bit reinterpretations, conversions with a rounding mode, integer
# intrinsics): the GPU's libdevice against the cpu target's host forms.
TYPED = os.path.join(HERE, "..", "..", "lit", "cpu", "run_libdevice_typed.tle")
for kernel, sig, args in (("k32", "*fp32, *i32", {"x_ptr": "full:-2.5:fp32:2", "out_ptr": "zeros:i32:16"}),
                          ("k64", "*fp64, *i64", {"x_ptr": "full:1.5:fp64:2", "out_ptr": "zeros:i64:8"})):
    case(f"libdevice typed functions ({kernel}) against the cpu target",
         lambda k=kernel, s=sig, a=args: t_inductor(k, s, "1", a, ["out_ptr"], source=TYPED))

# tl.dot_scaled (built-in emulation): the GPU's result against the float64 reference of
# tests/lit/cpu/Inputs/dot_scaled (the lit test checks the cpu target against the same).
SCALED = os.path.join(HERE, "..", "..", "lit", "cpu", "dot_scaled.tle")
SCALED_IN = os.path.join(HERE, "..", "..", "lit", "cpu", "Inputs", "dot_scaled")


def t_dot_scaled(sig, a_fmt, b_fmt, scale_a, acc, a, b, want):
    path = os.path.join(WORK, f"dot_scaled_{a_fmt}_{b_fmt}.npy")
    f = lambda n: os.path.join(SCALED_IN, n + ".npy")  # noqa: E731
    cmd = [TLE_RUN, SCALED, "-n", "mx", "-s", sig, "-D", f"A_FMT='{a_fmt}'", "-D", f"B_FMT='{b_fmt}'",
           "-D", f"SCALE_A={scale_a}", "-D", f"ACC={acc}", "--target", "gpu", "-q",
           "--arg", f"a_ptr={f(a)}", "--arg", f"sa_ptr={f('f8_sa')}", "--arg", f"b_ptr={f(b)}",
           "--arg", f"sb_ptr={f('f8_sb')}", "--arg", "c_ptr=zeros:fp32:16x16", "--save", f"c_ptr={path}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or p.stdout.strip())
    return close(np.load(path), np.load(f(want)), rtol=1e-4, atol=1e-5)


for a in (("*u8, *u8, *u8, *u8, *fp32", "e4m3", "e5m2", True, False, "f8_a", "f8_b", "f8_c"),
          ("*u8, *u8, *u8, *u8, *fp32", "e2m1", "e4m3", True, False, "f4_a", "f4_b", "f4_c"),
          ("*fp32, *u8, *u8, *u8, *fp32", "bf16", "e2m1", False, True, "bf_a", "bf_b", "bf_c")):
    case(f"tl.dot_scaled {a[1]} x {a[2]} against the float64 reference", lambda a=a: t_dot_scaled(*a))

passed = sum(results)
print(f"{passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
