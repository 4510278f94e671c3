# quantkit: fp8 / int8 / int4 quantization kernels laid out as quantization libraries lay them out:
# a compatibility module with dtype limits from torch.finfo / torch.iinfo, constexpr-function
# configuration helpers, and kernel modules made with the decorator and with triton.jit(fn).
from .kernels.per_tensor import static_scaled_fp8_quant_kernel, dynamic_scale_kernel
from .kernels.per_group import per_group_quant_kernel, dequant_kernel
from .kernels.pack import pack_int4_kernel, unpack_int4_kernel
