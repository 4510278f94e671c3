"""Kernels with the debugging and compiler-hint features users reach for: device-side asserts and
prints (compiled in with debug=True), compile-time asserts and prints, alignment and contiguity
hints, tl.assume, load / store cache and eviction hints, typed parameter annotations instead of a
signature, and @triton.heuristics computing constexprs from the arguments."""
import triton
import triton.language as tl


@triton.heuristics({
    "EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0,
    "BLOCK": lambda args: min(triton.next_power_of_2(args["n"]), 1024),
})
@triton.jit(do_not_specialize=["n"])
def checked_gather_kernel(src_ptr, idx_ptr, out_ptr, n, n_src, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    tl.static_assert(BLOCK >= 16, "BLOCK is too small")
    tl.static_print("checked_gather_kernel: BLOCK =", BLOCK, "EVEN_N =", EVEN_N)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.max_contiguous(tl.multiple_of(i, 16), 16)
    if EVEN_N:
        idx = tl.load(idx_ptr + i, cache_modifier=".ca")
        live = tl.full([BLOCK], True, tl.int1)
    else:
        live = i < n
        idx = tl.load(idx_ptr + i, mask=live, other=0, cache_modifier=".cg")
    tl.device_assert((idx >= 0) & (idx < n_src), "index out of range", mask=live)
    assert tl.program_id(0) < tl.cdiv(n, BLOCK), "too many programs"
    v = tl.load(src_ptr + idx, mask=live, eviction_policy="evict_last")
    tl.store(out_ptr + i, v, mask=live, eviction_policy="evict_first", cache_modifier=".cs")


@triton.jit(debug=True)
def debug_stats_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, VERBOSE: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    s = tl.sum(x, axis=0)
    if VERBOSE:
        print("block sum", s)
        tl.device_print("first values", x, hex=False)
        tl.device_print("bits", x.to(tl.int32, bitcast=True), hex=True)
    if pid == 0:
        tl.device_print("n =", n)
    assert s == s, "NaN in the input"
    tl.store(out_ptr + pid, s)


@triton.jit
def annotated_scale_kernel(x_ptr: tl.pointer_type(tl.float16), y_ptr: "*fp16:16", scale: tl.float32, n: tl.int64,
                           BLOCK: tl.constexpr = 1024):
    # no -s needed: every parameter carries its type
    pid = tl.program_id(0).to(tl.int64)
    tl.assume(n > 0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    y: tl.float16 = (x * scale).to(tl.float16)
    tl.store(y_ptr + i, y, mask=i < n)
