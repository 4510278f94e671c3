"""Runs bench/moe_align/moe_align.tle's three plain-Triton kernels (count, prefix, scatter) on
the CPU target with tle-run, on small random shapes, twice on one workspace, and checks them
against a reference written here in plain Python: num_tokens_post_pad and expert_ids exactly,
each expert's run of sorted_token_ids as a set of indices, padding and tail exactly, and the
workspace's counts back to zero after each call. Prints one PASS or FAIL line per case.

Usage: moe_align_cpu.py TLE_RUN SOURCE WORK_DIR
"""
import os
import random
import struct
import subprocess
import sys

BLOCK, BLOCKS = 64, 4  # entries per count/scatter program, blocks filled per scatter program


def write_npy(path, values):
    """values as a 1-D little-endian int32 .npy file."""
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%di" % len(values), *values))


def read_npy(path):
    """The int32 values of a 1-D .npy file tle-run wrote."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    header = data[start:start + hlen].decode()
    assert "'<i4'" in header, header
    body = data[start + hlen:]
    return list(struct.unpack("<%di" % (len(body) // 4), body))


def reference(topk_ids, num_experts, block_size):
    """(counts, post_pad, expert_ids, per-expert starts) of moe_align_block_size."""
    counts = [0] * num_experts
    for e in topk_ids:
        counts[e] += 1
    starts, post_pad = [], 0
    for c in counts:
        starts.append(post_pad)
        post_pad += (c + block_size - 1) // block_size * block_size
    max_blocks = (len(topk_ids) + num_experts * (block_size - 1) + block_size - 1) // block_size
    expert_ids = [-1] * max_blocks
    for e in range(num_experts):
        for b in range(starts[e] // block_size, (starts[e] + counts[e] + block_size - 1) // block_size):
            expert_ids[b] = e
    return counts, post_pad, expert_ids, starts


def check(topk_ids, num_experts, block_size, sorted_ids, expert_ids, post_pad):
    """The first difference from the reference, or None."""
    numel = len(topk_ids)
    counts, ref_post_pad, ref_expert_ids, starts = reference(topk_ids, num_experts, block_size)
    if post_pad != ref_post_pad:
        return f"num_tokens_post_pad {post_pad}, expected {ref_post_pad}"
    if expert_ids != ref_expert_ids:
        b = next(i for i, (x, y) in enumerate(zip(expert_ids, ref_expert_ids)) if x != y)
        return f"expert_ids[{b}] = {expert_ids[b]}, expected {ref_expert_ids[b]}"
    if len(sorted_ids) != numel + num_experts * (block_size - 1):
        return f"sorted_token_ids has {len(sorted_ids)} places"
    for e in range(num_experts):
        run = sorted_ids[starts[e]:starts[e] + counts[e]]
        want = [i for i, x in enumerate(topk_ids) if x == e]
        if sorted(run) != want:
            return f"expert {e}: its run holds {sorted(run)[:8]}..., expected {want[:8]}..."
        end = starts[e] + (counts[e] + block_size - 1) // block_size * block_size
        if any(x != numel for x in sorted_ids[starts[e] + counts[e]:end]):
            return f"expert {e}: padding is not {numel}"
    if any(x != numel for x in sorted_ids[ref_post_pad:]):
        return f"the tail after {ref_post_pad} is not {numel}"
    return None


def run(tle_run, source, kernel, args, grid, defines):
    cmd = [tle_run, source, "-n", kernel, "--target", "cpu", "--check-bounds", "-q", "--grid", grid]
    for d in defines:
        cmd += ["-D", d]
    for a in args:
        cmd += ["--arg", a[0]] if isinstance(a, tuple) else ["--arg", a]
    saves = [a[1] for a in args if isinstance(a, tuple)]
    for s in saves:
        cmd += ["--save", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{kernel}: tle-run failed:\n{out.stdout}{out.stderr}")


def align(tle_run, source, work, topk_ids, num_experts, experts_p2, block_size, call):
    """One moe_align_block_size call through the three kernels on the workspace file ws.npy."""
    numel = len(topk_ids)
    max_len = numel + num_experts * (block_size - 1)
    max_blocks = (max_len + block_size - 1) // block_size
    f = {n: os.path.join(work, n + ".npy") for n in ("ids", "ws", "sorted", "experts", "post")}
    write_npy(f["ids"], topk_ids)
    if call == 0:
        write_npy(f["ws"], [0] * (4 * experts_p2))
        write_npy(f["sorted"], [-7] * max_len)
        write_npy(f["experts"], [-7] * max_blocks)
        write_npy(f["post"], [-7])
    run(tle_run, source, "moe_count_kernel",
        [f"topk_ids_ptr={f['ids']}", (f"ws_ptr={f['ws']}", f"ws_ptr={f['ws']}"), f"numel={numel}"],
        "cdiv(numel, BLOCK)", [f"BLOCK={BLOCK}"])
    run(tle_run, source, "moe_prefix_kernel",
        [(f"ws_ptr={f['ws']}", f"ws_ptr={f['ws']}"), (f"post_pad_ptr={f['post']}", f"post_pad_ptr={f['post']}")],
        "1", [f"NUM_EXPERTS={num_experts}", f"EXPERTS_P2={experts_p2}", f"BLOCK_SIZE={block_size}"])
    grid = max((numel + BLOCK - 1) // BLOCK, (max_blocks + BLOCKS - 1) // BLOCKS)
    run(tle_run, source, "moe_scatter_kernel",
        [f"topk_ids_ptr={f['ids']}", (f"sorted_ids_ptr={f['sorted']}", f"sorted_ids_ptr={f['sorted']}"),
         (f"expert_ids_ptr={f['experts']}", f"expert_ids_ptr={f['experts']}"),
         (f"ws_ptr={f['ws']}", f"ws_ptr={f['ws']}"), f"numel={numel}", f"max_len={max_len}"],
        str(grid), [f"EXPERTS_P2={experts_p2}", f"BLOCK_SIZE={block_size}", f"BLOCK={BLOCK}",
                    f"BLOCKS={BLOCKS}"])
    ws = read_npy(f["ws"])
    return read_npy(f["sorted"]), read_npy(f["experts"]), read_npy(f["post"])[0], ws


def main():
    tle_run, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    rng = random.Random(34)
    # (experts, power of two above, block size, tokens, top_k, skew): skew draws experts from a
    # few hot ones, leaving most experts empty; 6 experts is not a power of two.
    cases = [(8, 8, 4, 37, 2, False), (16, 16, 8, 100, 4, True), (6, 8, 16, 50, 3, False),
             (32, 32, 16, 9, 8, False), (64, 64, 32, 128, 8, True)]
    failed = 0
    for num_experts, p2, block_size, tokens, top_k, skew in cases:
        for call in range(2):
            hot = rng.sample(range(num_experts), min(3, num_experts))
            ids = [rng.choice(hot) if skew and rng.random() < 0.8 else rng.randrange(num_experts)
                   for _ in range(tokens * top_k)]
            sorted_ids, expert_ids, post_pad, ws = align(tle_run, source, work, ids, num_experts, p2,
                                                         block_size, call)
            err = check(ids, num_experts, block_size, sorted_ids, expert_ids, post_pad)
            if err is None and any(ws[:p2]):
                err = "the workspace's counts are not zero after the call"
            name = f"E={num_experts} B={block_size} tokens={tokens} top_k={top_k} call={call}"
            print(f"{'PASS' if err is None else 'FAIL'} {name}" + (f": {err}" if err else ""))
            failed += err is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
