"""Checks of the Python benchmarks' helpers that need no GPU, run by ctest (bench.python-helpers):
profile_common.time_rounds (rotating order, do_bench's spans, no callables), the Triton
launches that matmul_compare.py / matmul_profile_pair.py and attention_bench.py /
attention_profile_pair.py share (argument order), and launch_overhead_triton's burst timing,
merged rows and table. torch and triton are replaced by stand-ins, so
that the check runs where neither is installed; exits non-zero on the first failed assertion."""
import os
import sys
import types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
calls = []
torch = types.ModuleType("torch"); torch.cuda = types.SimpleNamespace()
torch.nn = types.ModuleType("torch.nn"); F = types.ModuleType("torch.nn.functional"); torch.nn.functional = F
att = types.ModuleType("torch.nn.attention")
triton = types.ModuleType("triton"); testing = types.ModuleType("triton.testing"); triton.testing = testing
def do_bench(fn, warmup, rep, return_mode):
    fn(); calls.append((warmup, rep)); return float(len(calls))
testing.do_bench = do_bench
for name, mod in {"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": F, "torch.nn.attention": att,
                  "triton": triton, "triton.testing": testing}.items():
    sys.modules[name] = mod
import profile_common, matmul_compare, attention_bench
order = []
ms = profile_common.time_rounds({"a": lambda: order.append("a"), "b": lambda: order.append("b"),
                                 "c": lambda: order.append("c")}, 3, 5, 7)
assert order == list("abcbcacab"), order
assert ms == {"a": [1.0, 6.0, 8.0], "b": [2.0, 4.0, 9.0], "c": [3.0, 5.0, 7.0]}, ms
assert all(c == (5, 7) for c in calls)
assert profile_common.time_rounds({}, 3) == {}
class T:
    def __init__(self, shape, strides): self.shape, self._s = shape, strides
    def stride(self, i=None): return self._s if i is None else self._s[i]
class K:
    def __getitem__(self, grid):
        def run(*a, **kw): return ("launch", grid, a, kw)
        return run
a, b, c = T((4, 8), (8, 1)), T((8, 16), (16, 1)), T((4, 16), (16, 1))
r = matmul_compare.launch_triton(K(), 3, a, b, c, 4, 16, 8, (128, 256, 64, 8, 3))
assert r[1] == (3,) and r[2] == (a, b, c, 4, 16, 8, 8, 1, 16, 1, 16, 1), r
assert r[3] == dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
r = matmul_compare.launch_triton(K(), 3, a, b, c, 4, 16, 8, (128, 256, 64, 8, 3), bias="bias")
assert r[2][:4] == (a, b, c, "bias")
q = T((4, 32, 1024, 64), (32 * 1024 * 64, 1024 * 64, 64, 1))
r = attention_bench.launch_triton(K(), (8, 128), q, q, q, q, 0.125, 64, 1, 3, True)
assert r[2] == (q, q, q, q, 0.125, 4, 32, 1024), r[2]
assert r[3] == dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=1, num_warps=8, num_stages=3)
r = attention_bench.launch_triton(K(), (8, 128), q, q, q, q, 0.125, 64, 0, 1, False)
assert r[2] == (q, q, q, q, 0.125) + q.stride()[:3] * 4 + (32, 1024), r[2]
import matmul_profile_pair, attention_profile_pair  # imports resolve
# launch_overhead_triton: the burst timing, the merge with tle-bench-launch's rows, the table.
import launch_overhead_triton as lot
ticks, syncs, made = iter(range(1000)), [], []
med, per_round = lot.time_variants({"a": lambda k: made.append(("a", k)), "b": lambda k: made.append(("b", k))},
                                   launches=10, burst=4, rounds=3, synchronize=lambda: syncs.append(1),
                                   clock=lambda: float(next(ticks)))
assert per_round == 8 and len(syncs) == 12 and made[:3] == [("a", 4), ("b", 4), ("a", 4)], (per_round, made)
assert med == {"a": 2e6 / 8, "b": 2e6 / 8}, med  # 2 bursts of 4 a round, each call one tick (1 s) long
tle = {"variants": [{"name": "cuLaunchKernel", "us_per_launch": 3.0}, {"name": "Kernel::launch (typed)",
                                                                         "us_per_launch": 3.1}]}
rows = lot.merge_rows(tle, {"Triton add_kernel[grid](...)": 20.5})
assert [r[0] for r in rows] == ["cuLaunchKernel", "Kernel::launch (typed)", "Triton add_kernel[grid](...)"], rows
assert abs(rows[2][2] - 17.5) < 1e-9 and rows[0][2] == 0.0, rows
assert lot.merge_rows(None, {"t": 1.0}) == [("t", 1.0, None)]
table = lot.format_table(rows + [("t", 1.0, None)]).splitlines()
assert table[0] == "| variant | us per launch (median) | over cuLaunchKernel |", table
assert table[4] == "| Triton add_kernel[grid](...) | 20.500 | +17.500 |" and table[5] == "| t | 1.000 | - |", table
print("python helper checks passed")
