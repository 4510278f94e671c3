"""Tests of the PyTorch bridge (python/tle) without torch or a GPU: signatures inferred from fake
arrays, the cache's keys and invalidation, metadata read from modules compiled here, refused
launches with their messages, and whole launches of the examples through libtle_rt on the driver
test double (TLE_RT_CUDA_DRIVER), checked against Python references.

Environment (set by ctest): PYTHONPATH holding python/, TLE_TLEC, TLE_RT_LIBRARY,
TLE_RT_CUDA_DRIVER (the test double), TLE_EXAMPLES (the examples directory)."""
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tle  # noqa: E402
from fakes import DLPackArray, FakeArray, FakeTorchTensor  # noqa: E402
from tle import compiler, params  # noqa: E402

EXAMPLES = os.environ.get("TLE_EXAMPLES", os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
VECTOR_ADD = os.path.join(EXAMPLES, "vector_add.tle")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tle-bridge-")
        self.cache = os.path.join(self.dir, "cache")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class ImportTest(unittest.TestCase):
    def test_imports_without_torch(self):
        out = subprocess.run([sys.executable, "-c", "import sys, tle; print('torch' in sys.modules)"],
                             capture_output=True, text=True, env=dict(os.environ))
        self.assertEqual(out.stdout.strip(), "False", out.stderr)

    def test_installed_paths(self):
        prefix = os.environ.get("TLE_BRIDGE_EXPECT_INSTALLED")
        if not prefix:
            self.skipTest("not the installed package")
        self.assertEqual(tle.find_tlec(), os.path.join(os.path.realpath(prefix), "bin", "tlec"))
        from tle import runtime
        lib = runtime._find_library()
        self.assertTrue(os.path.realpath(lib).startswith(os.path.realpath(prefix)), lib)
        self.assertEqual(os.path.basename(lib), "libtle_rt.so")


class SignatureTest(TempDirTest):
    def kernel(self, text, name=None):
        return tle.jit(write(os.path.join(self.dir, "k.tle"), text), name, cache_dir=self.cache)

    def test_vector_add(self):
        k = tle.jit(VECTOR_ADD, cache_dir=self.cache)
        x, y, z = FakeArray([1.0] * 8), FakeArray([2.0] * 8), FakeArray([0.0] * 8)
        self.assertEqual(k.signature(x, y, z, 8, BLOCK=1024), ("*fp32:16, *fp32:16, *fp32:16, i32", {"BLOCK": "1024"}))
        self.assertEqual(k.signature(x, y, z, 32, 1024), ("*fp32:16, *fp32:16, *fp32:16, i32:16", {"BLOCK": "1024"}))
        self.assertEqual(k.signature(x, y, z, 1, BLOCK=64)[0], "*fp32:16, *fp32:16, *fp32:16, i32:1")

    def test_alignment_and_dtypes(self):
        k = self.kernel("import triton\n@triton.jit\ndef k(a, b, c, d, e, f, g):\n    pass\n")
        sig, _ = k.signature(FakeArray([1.0] * 4, offset=1), FakeArray([1] * 4, "<i4"), FakeArray([0] * 4, "|u1"),
                             FakeArray([0] * 4, "<f2"), FakeArray([True] * 4, "|b1"), FakeArray([0] * 4, "<i8"),
                             FakeArray([0.0] * 4, "<f8"))
        self.assertEqual(sig, "*fp32, *i32:16, *u8:16, *fp16:16, *i1:16, *i64:16, *fp64:16")

    def test_scalars(self):
        k = self.kernel("import triton\n@triton.jit\ndef k(a, b, c, d, e, f, g, h, i):\n    pass\n")
        sig, _ = k.signature(7, 48, 0, -16, 2**31, 2**63, 1.5, True, None)
        self.assertEqual(sig, "i32, i32:16, i32:16, i32:16, i64:16, u64:16, fp32, i1, None")

    def test_dlpack(self):
        k = tle.jit(VECTOR_ADD, cache_dir=self.cache)
        a = DLPackArray([1.0] * 8)
        view = tle.array_view(a)
        self.assertEqual((view.dtype, view.device, view.kind), ("fp32", 0, "dlpack"))
        self.assertEqual(view.ptr, a.array.__cuda_array_interface__["data"][0])
        self.assertEqual(k.signature(a, a, a, 8, BLOCK=1024)[0], "*fp32:16, *fp32:16, *fp32:16, i32")
        with self.assertRaisesRegex(tle.ArgumentError, "device type 1; kernels take CUDA memory"):
            k.signature(DLPackArray([1.0], device_type=1), a, a, 8, BLOCK=1024)

    def test_annotations_and_do_not_specialize(self):
        k = self.kernel('import triton\nimport triton.language as tl\n'
                        '@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=[1])\n'
                        'def k(x: tl.pointer_type(tl.float16), y, n, m: tl.int64, B: tl.constexpr = 4):\n    pass\n')
        self.assertEqual([(p.name, p.constexpr, p.type) for p in k.kdef.params],
                         [("x", False, "*fp16"), ("y", False, None), ("n", False, None), ("m", False, "i64"),
                          ("B", True, None)])
        sig, defines = k.signature(FakeArray([0] * 4, "<f2"), FakeArray([0.0] * 4), 32, 1, B=True)
        self.assertEqual((sig, defines), ("*fp16:16, *fp32, i32, i64:1", {"B": "True"}))
        with self.assertRaisesRegex(tle.ArgumentError, r"k: argument 'x' is a fp32 tensor but the parameter is \*fp16"):
            k.signature(FakeArray([0.0] * 4), FakeArray([0.0] * 4), 32, 1)
        with self.assertRaisesRegex(tle.ArgumentError, r"k: argument 'x' is a int but the parameter is a pointer"):
            k.signature(3, FakeArray([0.0] * 4), 32, 1)

    def test_binding_errors(self):
        k = tle.jit(VECTOR_ADD, cache_dir=self.cache)
        x = FakeArray([0.0] * 4)
        with self.assertRaisesRegex(tle.ArgumentError, r"add_kernel takes 5 parameters \(x_ptr, y_ptr, z_ptr, "
                                    r"n_elements, BLOCK\) but was given 6 positional arguments"):
            k.signature(x, x, x, 4, 1024, 5)
        with self.assertRaisesRegex(tle.ArgumentError, r"add_kernel has no parameter 'BLOK'"):
            k.signature(x, x, x, 4, BLOK=1024)
        with self.assertRaisesRegex(tle.ArgumentError, r"add_kernel is missing an argument for parameter 'n_elements'"):
            k.signature(x, x, x, BLOCK=1024)
        with self.assertRaisesRegex(tle.ArgumentError, r"add_kernel got two values for parameter 'x_ptr'"):
            k.signature(x, x, x, 4, x_ptr=x)
        with self.assertRaisesRegex(tle.ArgumentError, r"add_kernel: argument 'n_elements' is a str"):
            k.signature(x, x, x, "4", BLOCK=1024)

    def test_kernel_lookup(self):
        path = write(os.path.join(self.dir, "two.tle"), "import triton\n@triton.jit\ndef a(x):\n    pass\n"
                     "def b_impl(x):\n    pass\nb = triton.jit(b_impl)\n")
        with self.assertRaisesRegex(ValueError, r"pass the kernel's name: the file has several @jit kernels \(a, b\)"):
            tle.jit(path)
        self.assertEqual(tle.jit(path, "b").kdef.params[0].name, "x")
        write(os.path.join(self.dir, "pkg", "__init__.py"), "")
        write(os.path.join(self.dir, "pkg", "kern.tle"), "import triton\n@triton.jit\ndef inner(p, q):\n    pass\n")
        main = write(os.path.join(self.dir, "main.tle"), "from pkg.kern import inner\n")
        self.assertEqual([p.name for p in params.find_kernel(main, "inner").params], ["p", "q"])
        with self.assertRaisesRegex(ValueError, r"no @jit kernel named 'c'"):
            tle.jit(path, "c")


class TorchPathTest(TempDirTest):
    """torch.Tensor arguments, through a stand-in exposing what the bridge reads."""

    def test_dtypes(self):
        k = tle.jit(write(os.path.join(self.dir, "k.tle"), "import triton\n@triton.jit\ndef k(a, b, c, d, e, f):\n    pass\n"),
                    cache_dir=self.cache)
        args = [FakeTorchTensor(d) for d in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "bool", "uint8", "int64")]
        args[5]._ptr += 8
        self.assertEqual(k.signature(*args)[0], "*bf16:16, *fp8e4nv:16, *fp8e5:16, *i1:16, *u8:16, *i64")
        view = tle.array_view(FakeTorchTensor("float16", index=1))
        self.assertEqual((view.dtype, view.device, view.kind), ("fp16", 1, "torch"))
        with self.assertRaisesRegex(tle.ArgumentError, r"k: argument 'a': the tensor is on cpu:0; kernels take CUDA tensors"):
            k.signature(FakeTorchTensor("float32", device="cpu"), *args[1:])
        with self.assertRaisesRegex(tle.ArgumentError, r"k: argument 'a': torch dtype torch.complex64 has no tlec type"):
            k.signature(FakeTorchTensor("complex64"), *args[1:])

    def test_devices_must_agree(self):
        spec = tle.jit(VECTOR_ADD, cache_dir=self.cache, output="ptx").specialize(
            FakeTorchTensor("float32"), FakeTorchTensor("float32"), FakeTorchTensor("float32"), 64, BLOCK=64)
        with self.assertRaisesRegex(tle.ArgumentError, r"the tensors are on different devices \(0, 1\)"):
            tle.load(spec.module.path)[(1,)](FakeTorchTensor("float32"), FakeTorchTensor("float32", index=1),
                                             FakeTorchTensor("float32"), 64)


class ExampleSpecializationTest(TempDirTest):
    """Every example specialised as tests/gpu/bridge_examples.py launches it on the GPU (dtypes,
    alignment, the shapes' integers, constexprs) compiles for sm_90a, and its arguments pack."""

    CASES = [
        ("vector_add", "add_kernel", "f" * 3 + "|98431", {"BLOCK": 1024}, 4),
        ("softmax", "softmax_kernel", "ff|781,781,1823,781", {"BLOCK_SIZE": 1024}, 4),
        ("layernorm", "layer_norm_fwd", "f" * 6 + "|8192,8192,1e-5", {"BLOCK_SIZE": 1024}, 4),
        ("depthwise_conv1d", "depthwise_conv1d_kernel", "ffff|200,1000", dict(BLOCK_C=32, BLOCK_T=64, K=4), 4),
        ("matmul_fp8", "matmul_kernel", "88h|1024,1024,1024,1024,1,1024,1,1024,1",
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, GROUP_M=8), 8),
        ("matmul_tn", "matmul_tn_kernel", "iiI|1000,1024,512,512,1,512,1,1024,1",
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8), 4),
        ("attention", "attn_fwd", "hhhh|0.125," + ",".join(["262144,65536,64"] * 4) + ",4,1024",
         dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False), 8),
        ("attention_tma", "attn_fwd", "hhhh|0.125,2,4,1024", dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False), 8),
        ("attention_fa3", "attn_fwd", "hhhh|0.125,2,4,1024", dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=128, CAUSAL=False), 4),
        ("softmax_cluster", "softmax_cluster", "ff|60000,60000,60000", dict(BLOCK=16384, CLUSTER=4), 16),
        ("softmax_cluster_staged", "softmax_cluster_staged", "ff|65536,65536,65536", dict(BLOCK=16384, CLUSTER=2), 16),
        # Across GPUs: the device record and the windows passed as tensors' pointers.
        ("all_gather", "all_gather", "fff|3000", dict(WORLD=2, BLOCK=1024), 4),
        ("all_gather_gemm", "all_gather_gemm", "ffhhh|1,200,256,192", dict(WORLD=2, BM=128, BN=128, BK=64), 8),
        ("gemm_reduce_scatter", "gemm_reduce_scatter", "ffhh|256,256,128", dict(WORLD=2, BM=128, BN=128, BK=64), 8),
    ]
    MATMULS = [("matmul", (128, 128, 32, 8), 4, False), ("matmul_tma", (128, 256, 64, 8), 8, False),
               ("matmul_decode", (16, 64, 128, 8), 4, False), ("matmul_persistent", (128, 128, 32, 8), 4, False),
               ("matmul_persistent_tma", (128, 128, 64, 8), 4, False), ("matmul_persistent_ws", (128, 128, 64, 8), 4, False),
               ("matmul_ws", (128, 256, 64, 8), 8, False), ("matmul_epilogue", (128, 128, 64, 8), 4, True),
               ("matmul_splitk_cluster", (64, 128, 128, 2), 4, False)]
    DTYPES = {"f": "float32", "h": "float16", "8": "float8_e4m3fn", "i": "int8", "I": "int32"}

    def cases(self):
        for ex, kernel, text, consts, warps in self.CASES:
            tensors, scalars = text.split("|")
            args = [FakeTorchTensor(self.DTYPES[c]) for c in tensors]
            args += [float(v) if "." in v or "e" in v else int(v) for v in scalars.split(",")]
            yield ex, kernel, args, consts, warps
        for ex, blocks, warps, bias in self.MATMULS:
            m, n, k = (16, 4096, 4096) if ex == "matmul_decode" else (64, 2048, 4096) if "splitk" in ex else (1000, 1024, 512)
            args = [FakeTorchTensor("float16") for _ in range(4 if bias else 3)] + [m, n, k, k, 1, n, 1, n, 1]
            names = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K" if "splitk" in ex else "GROUP_M")
            yield ex, "matmul_kernel", args, dict(zip(names, blocks)), warps

    def test_every_example(self):
        seen = set()
        for ex, kernel, args, consts, warps in self.cases():
            with self.subTest(example=ex):
                jk = tle.jit(os.path.join(EXAMPLES, ex + ".tle"), kernel, num_warps=warps, arch="sm_90a",
                             output="ptx", cache_dir=self.cache)
                spec = jk.specialize(*args, **consts)
                self.assertEqual(spec.module.metadata["target"], "sm_90a")
                packed, _ = tle.launch.pack_arguments(spec.metadata, dict(zip([p.name for p in jk.kdef.params], args)))
                self.assertEqual(len(packed), len(spec.metadata["params"]))
                seen.add(ex)
        examples = {f[:-4] for f in os.listdir(EXAMPLES) if f.endswith(".tle")}
        self.assertEqual(seen, examples, "every example is covered (tests/gpu/bridge_examples.py too)")


class CacheTest(TempDirTest):
    def test_key_covers_every_input(self):
        base = (b"src", "k", "*fp32, i32", {"B": "1"}, {"num_warps": 4}, "tlec 0.1.0 abc")
        key = compiler.cache_key(*base)
        self.assertEqual(key, compiler.cache_key(*base))
        self.assertEqual(key, compiler.cache_key(b"src", "k", "*fp32, i32", {"B": "1"}, {"num_warps": 4}, "tlec 0.1.0 abc"))
        variants = [(b"src ", ), (b"src", "k2"), (b"src", "k", "*fp32:16, i32"), (b"src", "k", "*fp32, i32", {"B": "2"}),
                    (b"src", "k", "*fp32, i32", {"B": "1"}, {"num_warps": 8}),
                    (b"src", "k", "*fp32, i32", {"B": "1"}, {"num_warps": 4}, "tlec 0.1.0 abd")]
        keys = {compiler.cache_key(*(v + base[len(v):])) for v in variants}
        self.assertEqual(len(keys), len(variants))
        self.assertNotIn(key, keys)

    def test_hits_misses_and_imports(self):
        write(os.path.join(self.dir, "src", "helpers.tle"),
              "import triton\nimport triton.language as tl\n@triton.jit\ndef twice(v):\n    return v * 2\n")
        path = write(os.path.join(self.dir, "src", "k.tle"),
                     "import triton\nimport triton.language as tl\nfrom helpers import twice\n"
                     "@triton.jit\ndef k(x, n, B: tl.constexpr):\n"
                     "    o = tl.arange(0, B)\n    tl.store(x + o, twice(tl.load(x + o, mask=o < n)), mask=o < n)\n")
        x = FakeArray([1.0] * 16)
        first = tle.jit(path, cache_dir=self.cache, output="ptx").specialize(x, 16, B=16)
        self.assertFalse(first.module.hit)
        self.assertTrue(first.module.path.startswith(self.cache))
        again = tle.jit(path, cache_dir=self.cache, output="ptx").specialize(x, 16, B=16)
        self.assertTrue(again.module.hit)
        self.assertEqual(again.module.path, first.module.path)
        other = tle.jit(path, cache_dir=self.cache, output="ptx").specialize(x, 15, B=16)
        self.assertFalse(other.module.hit)
        self.assertEqual(other.signature, "*fp32:16, i32")
        # Changing the imported module invalidates the entry though the kernel's file is unchanged.
        write(os.path.join(self.dir, "src", "helpers.tle"),
              "import triton\nimport triton.language as tl\n@triton.jit\ndef twice(v):\n    return v + v\n")
        changed = tle.jit(path, cache_dir=self.cache, output="ptx").specialize(x, 16, B=16)
        self.assertFalse(changed.module.hit)
        self.assertEqual(changed.module.key, first.module.key)

    def test_compile_error(self):
        path = write(os.path.join(self.dir, "bad.tle"), "import triton\nimport triton.language as tl\n"
                     "@triton.jit\ndef bad(x, B: tl.constexpr):\n    tl.store(x, undefined_name)\n")
        with self.assertRaises(tle.CompileError) as ctx:
            tle.jit(path, cache_dir=self.cache).specialize(FakeArray([0.0]), B=4)
        self.assertRegex(str(ctx.exception), r"bad\.tle:5:\d+: error: .*undefined_name")
        self.assertEqual(ctx.exception.command[0], tle.find_tlec())
        self.assertFalse(os.path.exists(self.cache) and any(
            f for _, _, fs in os.walk(self.cache) for f in fs))  # nothing cached

    def test_tlec_lookup(self):
        with self.assertRaisesRegex(tle.CompileError, r"tlec= names /no/such/tlec, which is not an executable"):
            tle.find_tlec("/no/such/tlec")
        saved = os.environ.get("TLE_TLEC")
        try:
            os.environ["TLE_TLEC"] = self.dir  # a directory
            with self.assertRaisesRegex(tle.CompileError, r"TLE_TLEC names .*, which is not an executable"):
                tle.find_tlec()
        finally:
            os.environ.pop("TLE_TLEC") if saved is None else os.environ.__setitem__("TLE_TLEC", saved)

    def test_default_cache_dir(self):
        env = {"TLE_CACHE_DIR": "/x/tle", "XDG_CACHE_HOME": "/y"}
        saved = {k: os.environ.get(k) for k in env}
        try:
            os.environ.update(env)
            self.assertEqual(tle.default_cache_dir(), "/x/tle")
            del os.environ["TLE_CACHE_DIR"]
            self.assertEqual(tle.default_cache_dir(), "/y/tle")
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


class MetadataTest(TempDirTest):
    def test_cubin_and_ptx_agree(self):
        m = tle.jit(os.path.join(EXAMPLES, "matmul.tle"), cache_dir=self.cache)
        a = FakeArray([0] * 64, "<f2")
        args = (a, a, a, 64, 64, 64, 64, 1, 64, 1, 64, 1)
        kw = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8)
        ptx = tle.jit(os.path.join(EXAMPLES, "matmul.tle"), cache_dir=self.cache, output="ptx").specialize(*args, **kw)
        self.assertEqual(ptx.signature, "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                                        "i32:16, i32:1, i32:16, i32:1")
        meta = ptx.metadata
        self.assertEqual([(p["name"], p["type"], p["divisibility"]) for p in meta["params"]],
                         [("a_ptr", "*fp16", 16), ("b_ptr", "*fp16", 16), ("c_ptr", "*fp16", 16), ("M", "i32", 16),
                          ("N", "i32", 16), ("K", "i32", 16), ("stride_am", "i32", 16), ("stride_bk", "i32", 16),
                          ("stride_cm", "i32", 16)])
        self.assertEqual(meta["constexprs"], {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128,
                                              "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8})
        self.assertEqual((meta["num_warps"], meta["block"]), (4, [128, 1, 1]))
        cubin = m.specialize(*args, **kw)
        if cubin.module.kind == "cubin":  # with the CUDA toolkit's ptxas
            self.assertEqual(cubin.module.image[:4], b"\x7fELF")
            self.assertEqual(cubin.metadata["params"], meta["params"])
            self.assertEqual(cubin.metadata["shared_bytes"], meta["shared_bytes"])

    def test_not_a_module(self):
        with self.assertRaisesRegex(tle.MetadataError, "has no __tle_metadata"):
            tle.read_module_metadata(b"// plain PTX\n.version 8.0\n")
        with self.assertRaisesRegex(tle.MetadataError, "malformed __tle_metadata"):
            tle.read_module_metadata(b".global .b8 __tle_metadata[3] = {123, 44, 0};")


class LaunchCheckTest(TempDirTest):
    """Refused launches of a module compiled here: nothing reaches the driver."""

    def setUp(self):
        super().setUp()
        self.x = FakeArray([1.0] * 64)
        spec = tle.jit(os.path.join(EXAMPLES, "softmax.tle"), cache_dir=self.cache, output="ptx").specialize(
            self.x, self.x, 32, 32, 5, 7, BLOCK_SIZE=64)
        self.assertEqual(spec.signature, "*fp32:16, *fp32:16, i32:16, i32:16, i32, i32")
        self.k = tle.load(spec.module.path)

    def refused(self, pattern, *args, grid=(1,), **kw):
        with self.assertRaisesRegex(tle.ArgumentError, pattern):
            self.k[grid](*args, **kw)

    def test_messages(self):
        x = self.x
        self.refused(r"softmax_kernel expects 6 arguments \(output_ptr, input_ptr, input_row_stride, "
                     r"output_row_stride, n_rows, n_cols\) but was given 5", x, x, 32, 32, 5)
        self.refused(r"softmax_kernel: argument 0 \('output_ptr', \*fp32\) takes a tensor but was given a int",
                     3, x, 32, 32, 5, 7)
        self.refused(r"argument 1 \('input_ptr', \*fp32\) takes a fp32 tensor but was given a fp16 tensor",
                     x, FakeArray([0] * 8, "<f2"), 32, 32, 5, 7)
        self.refused(r"argument 1 \('input_ptr', \*fp32\): address 0x[0-9a-f]+ is not a multiple of 16 bytes",
                     x, FakeArray([0.0] * 8, offset=1), 32, 32, 5, 7)
        self.refused(r"argument 2 \('input_row_stride', i32\) is a scalar but was given a tensor", x, x, x, 32, 5, 7)
        self.refused(r"argument 2 \('input_row_stride', i32\): 33 is not a multiple of 16", x, x, 33, 32, 5, 7)
        self.refused(r"argument 4 \('n_rows', i32\): 2147483648 is outside i32's range", x, x, 32, 32, 2**31, 7)
        self.refused(r"argument 5 \('n_cols', i32\) takes an integer but was given 7.0", x, x, 32, 32, 5, 7.0)
        self.refused(r"unexpected or repeated argument 'rows'", x, x, 32, 32, 5, rows=7)
        self.refused(r"every dimension must be an integer of at least 1", x, x, 32, 32, 5, 7, grid=(0,))
        self.refused(r"the grid must be an int or a tuple of 1 to 3 ints", x, x, 32, 32, 5, 7, grid=(1, 1, 1, 1))
        self.refused(r"every dimension must be an integer of at least 1", x, x, 32, 32, 5, 7,
                     grid=lambda meta: (meta["n_rows"] - 5,))


class MockLaunchTest(TempDirTest):
    """Whole launches on the driver test double, whose emulations of the examples compute results."""

    def setUp(self):
        super().setUp()
        if not os.environ.get("TLE_RT_CUDA_DRIVER"):
            self.skipTest("TLE_RT_CUDA_DRIVER (the driver test double) is not set")

    def test_vector_add(self):
        rng = random.Random(1)
        n = 3000
        xs, ys = [rng.uniform(-1, 1) for _ in range(n)], [rng.uniform(-1, 1) for _ in range(n)]
        x, y, z = FakeArray(xs), FakeArray(ys), FakeArray([0.0] * n)
        add = tle.jit(VECTOR_ADD, cache_dir=self.cache)
        spec = add[lambda meta: (tle.cdiv(meta["n_elements"], meta["BLOCK"]),)](x, y, z, n, BLOCK=1024)
        self.assertEqual(spec.signature, "*fp32:16, *fp32:16, *fp32:16, i32")
        ref = FakeArray([a + b for a, b in zip(x.values(), y.values())])  # float32 sums of float32 inputs
        self.assertEqual(z.values(), ref.values())
        d = DLPackArray([0.0] * n)
        add[(3,)](x, y, d, n, BLOCK=1024)
        self.assertEqual(d.values(), ref.values())

    def test_softmax(self):
        rng = random.Random(2)
        rows, cols, stride = 5, 100, 112
        data = [rng.uniform(-3, 3) for _ in range(rows * stride)]
        x, y = FakeArray(data), FakeArray([0.0] * rows * stride)
        sm = tle.jit(os.path.join(EXAMPLES, "softmax.tle"), cache_dir=self.cache)
        sm[(3,)](y, x, stride, stride, rows, cols, BLOCK_SIZE=tle.next_power_of_2(cols))
        got, xv = y.values(), x.values()
        for r in range(rows):
            row = xv[r * stride:r * stride + cols]
            e = [math.exp(v - max(row)) for v in row]
            for c in range(cols):
                self.assertAlmostEqual(got[r * stride + c], e[c] / sum(e), delta=1e-6)

    def test_layernorm(self):
        rng = random.Random(3)
        rows, n = 4, 48
        X = FakeArray([rng.uniform(-2, 2) for _ in range(rows * n)])
        W, B = FakeArray([rng.uniform(0.5, 1.5) for _ in range(n)]), FakeArray([rng.uniform(-1, 1) for _ in range(n)])
        Y, Mean, Rstd = FakeArray([0.0] * rows * n), FakeArray([0.0] * rows), FakeArray([0.0] * rows)
        ln = tle.jit(os.path.join(EXAMPLES, "layernorm.tle"), cache_dir=self.cache)
        spec = ln[(rows,)](X, Y, W, B, Mean, Rstd, n, n, 1e-5, BLOCK_SIZE=64)
        self.assertEqual(spec.signature, "*fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, *fp32:16, i32:16, i32:16, fp32")
        xv, wv, bv, yv = X.values(), W.values(), B.values(), Y.values()
        for r in range(rows):
            row = xv[r * n:(r + 1) * n]
            mean = sum(row) / n
            rstd = 1 / math.sqrt(sum((v - mean) ** 2 for v in row) / n + 1e-5)
            self.assertAlmostEqual(Mean.values()[r], mean, delta=1e-5)
            self.assertAlmostEqual(Rstd.values()[r], rstd, delta=1e-4 * rstd)
            for c in range(n):
                self.assertAlmostEqual(yv[r * n + c], (row[c] - mean) * rstd * wv[c] + bv[c], delta=1e-4)

    def test_matmul_strides_equal_to_1(self):
        # The unit strides become constants (i32:1) and leave the parameter list: the packed
        # arguments must still be the ones the kernel (here the double's emulation) reads.
        rng = random.Random(4)
        m, n, k = 32, 48, 16
        a = FakeArray([rng.uniform(-1, 1) for _ in range(m * k)], "<f2")
        b = FakeArray([rng.uniform(-1, 1) for _ in range(k * n)], "<f2")
        c = FakeArray([0.0] * (m * n), "<f2")
        mm = tle.jit(os.path.join(EXAMPLES, "matmul.tle"), cache_dir=self.cache)
        spec = mm[lambda meta: (tle.cdiv(meta["M"], meta["BLOCK_M"]) * tle.cdiv(meta["N"], meta["BLOCK_N"]),)](
            a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8)
        self.assertEqual(spec.signature, "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
                                         "i32:16, i32:1, i32:16, i32:1")
        av, bv, cv = a.values(), b.values(), c.values()
        for i in range(m):
            for j in range(n):
                ref = sum(av[i * k + t] * bv[t * n + j] for t in range(k))
                self.assertAlmostEqual(cv[i * n + j], ref, delta=2e-3 * abs(ref) + 2e-3)

    def test_runtime_refusal(self):
        add = tle.jit(VECTOR_ADD, cache_dir=self.cache)
        x = FakeArray([0.0] * 16)
        with self.assertRaisesRegex(tle.RuntimeLibraryError, r"launching add_kernel: .*grid") as ctx:
            add[(1, 70000)](x, x, x, 16, BLOCK=1024)  # y above 65535: refused by libtle_rt
        self.assertEqual(ctx.exception.status, 4)

    def test_no_driver(self):
        script = ("import tle, sys\nsys.path.insert(0, %r)\nfrom fakes import FakeArray\nx = FakeArray([0.0] * 4)\n"
                  "try:\n    tle.jit(%r, cache_dir=%r)[(1,)](x, x, x, 4, BLOCK=1024)\n"
                  "except tle.NoDriverError as e:\n    print('NoDriverError', e.status, e)\n"
                  % (os.path.dirname(os.path.abspath(__file__)), VECTOR_ADD, self.cache))
        env = dict(os.environ, TLE_RT_CUDA_DRIVER=os.path.join(self.dir, "no-such-libcuda.so"))
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
        self.assertRegex(out.stdout, r"NoDriverError 1 .*cannot load the CUDA driver", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
