import sys
sys.path.insert(0, "bench")
import topk_bench as tb
tb.VARIANTS = {
    "tle_plain": ("topk_radix", 4096, 11, 0, 16),
    "tle_cluster16_8k": ("topk_radix_cluster", 8192, 11, 16, 16),
    "tle_cluster16_8k_w8": ("topk_radix_cluster", 8192, 11, 16, 8),
    "tle_cluster16_8k_r10": ("topk_radix_cluster", 8192, 10, 16, 16),
    "tle_push8_16k": ("topk_radix_cluster_push", 16384, 11, 8, 16),
    "tle_push8_16k_w8": ("topk_radix_cluster_push", 16384, 11, 8, 8),
    "tle_cluster8_16k_w8": ("topk_radix_cluster", 16384, 11, 8, 8),
}
tb.SELECTOR = [(1, 131072, 2048)]
tb.RADIX = []
sys.argv = ["topk_bench.py"] + sys.argv[1:]
tb.main()
