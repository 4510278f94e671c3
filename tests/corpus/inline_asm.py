"""Inline PTX through tl.inline_asm_elementwise, as quantization and fast-math kernels use it:
unpacking four int4 pairs per byte register (pack=4), a tanh.approx activation on fp32, two
results at once from one statement, and a byte-wise permute of bf16 pairs."""
import triton
import triton.language as tl


@triton.jit
def fast_tanh(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def fast_gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0).to(tl.float32)
    y = 0.5 * x * (1 + fast_tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    tl.store(y_ptr + i, y.to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def unpack_int4_kernel(packed_ptr, lo_ptr, hi_ptr, n_bytes, BLOCK: tl.constexpr):
    # each byte holds two signed 4-bit values; four bytes share one 32-bit register
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n_bytes
    b = tl.load(packed_ptr + i, mask=m, other=0)
    lo, hi = tl.inline_asm_elementwise(
        asm="""
        {
        .reg .b32 t;
        shl.b32 t, $2, 4;
        and.b32 t, t, 0xF0F0F0F0;
        mov.b32 $0, t;
        and.b32 $1, $2, 0xF0F0F0F0;
        }
        """,
        constraints="=r,=r,r",
        args=[b],
        dtype=(tl.int8, tl.int8),
        is_pure=True,
        pack=4,
    )
    # arithmetic shift brings the nibble down with its sign
    tl.store(lo_ptr + i, lo >> 4, mask=m)
    tl.store(hi_ptr + i, hi >> 4, mask=m)


@triton.jit
def swap_halves_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # bf16 pairs packed in one register: prmt swaps the two halves of each pair
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    y = tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x1032;", "=r,r", [x], dtype=tl.bfloat16, is_pure=True,
                                  pack=2)
    tl.store(y_ptr + i, y, mask=i < n)
