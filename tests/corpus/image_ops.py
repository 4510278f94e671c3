"""Pre-processing kernels on 8-bit images: HWC uint8 pixels to normalised CHW floats (the channel
count padded to a power of two inside the kernel), and a 256-bin intensity histogram."""
import torch

import triton
import triton.language as tl


@triton.jit
def normalize_hwc_to_chw_kernel(img_ptr, out_ptr, mean_ptr, std_ptr, n_pixels,
                                C: tl.constexpr, BLOCK_P: tl.constexpr):
    CP: tl.constexpr = triton.next_power_of_2(C)
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.arange(0, CP)
    m = (p < n_pixels)[:, None] & (c < C)[None, :]
    px = tl.load(img_ptr + p[:, None] * C + c[None, :], mask=m, other=0)
    tl.static_assert(px.dtype == tl.uint8)
    mean = tl.load(mean_ptr + c, mask=c < C, other=0.0)
    std = tl.load(std_ptr + c, mask=c < C, other=1.0)
    x = (px.to(tl.float32) * (1.0 / 255.0) - mean[None, :]) / std[None, :]
    # [P, C] -> [C, P]: each channel plane is contiguous in the output
    xt = tl.trans(x)
    tl.store(out_ptr + c[:, None] * n_pixels + p[None, :], xt.to(out_ptr.dtype.element_ty), mask=tl.trans(m))


@triton.jit
def byte_histogram_kernel(img_ptr, hist_ptr, n, BLOCK: tl.constexpr, PROGRAMS: tl.constexpr):
    per_program = triton.cdiv(BLOCK * 4, 4)
    acc = tl.zeros([256], dtype=tl.int32)
    for start in range(tl.program_id(0) * per_program, n, PROGRAMS * per_program):
        i = start + tl.arange(0, BLOCK)
        v = tl.load(img_ptr + i, mask=i < n, other=0)
        acc += tl.histogram(v.to(tl.int32), 256, mask=i < n)
    tl.atomic_add(hist_ptr + tl.arange(0, 256), acc)


def to_chw(img, mean, std):
    H, W, C = img.shape
    out = torch.empty((C, H, W), device=img.device, dtype=torch.float16)
    normalize_hwc_to_chw_kernel[(triton.cdiv(H * W, 256), )](img, out, mean, std, H * W, C=C, BLOCK_P=256)
    return out
