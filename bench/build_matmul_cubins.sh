#!/usr/bin/env bash
# Compiles examples/matmul.tle (fp8e4nv: examples/matmul_fp8.tle; int8, tf32: examples/matmul_tn.tle; SOURCE=matmul_tma:
# examples/matmul_tma.tle, tiles through tensor descriptors; SOURCE=matmul_persistent:
# examples/matmul_persistent.tle, one program per SM looping over the tiles; SOURCE=matmul_ws,
# matmul_persistent_tma, matmul_persistent_ws, matmul_epilogue, matmul_decode: those examples; SOURCE=matmul_splitk_cluster:
# K split over a cluster of SPLIT_K CTAs (env, default 2)) for sm_90a once per block configuration, for
# bench/matmul_compare.py.
# Usage: [DTYPE=fp16|bf16|fp8e4nv|int8|tf32] [SOURCE=matmul|matmul_tma|matmul_persistent|matmul_ws|matmul_persistent_tma|matmul_persistent_ws|matmul_epilogue|matmul_splitk_cluster|matmul_decode] [SPLIT_K=N] bench/build_matmul_cubins.sh TLEC OUT_DIR [BMxBNxBKxWxS ...]
# Writes mm_<BM>x<BN>x<BK>_w<W>_s<S>.sm_90a.cubin (fp16), mm_bf16_... (bf16), mm_fp8e4nv_... (fp8),
# mm_int8_... (int8 operands, int32 output) or mm_tf32_... (fp32 operands and output);
# with SOURCE=matmul_tma, mmtma_... and mmtma_bf16_...; with SOURCE=matmul_persistent, mmpers_...
# and mmpers_bf16_...; mmws_, mmptma_, mmpws_, mmepi_ and mmdec_ likewise; mmskc<SPLIT_K>_ for matmul_splitk_cluster.
set -euo pipefail
TLEC="$1"; OUT="$2"; shift 2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONFIGS=("$@")
((${#CONFIGS[@]})) || CONFIGS=(128x128x64x4x3 128x128x64x4x4 128x256x64x8x3 128x128x32x4x3)
DT="${DTYPE:-fp16}"
SRC=examples/matmul.tle; IN="$DT"; OUTT="$DT"
case "$DT" in
  fp16) PRE=mm ;;
  bf16) PRE=mm_bf16 ;;
  fp8e4nv) PRE=mm_fp8e4nv; SRC=examples/matmul_fp8.tle; OUTT=fp16 ;;
  int8) PRE=mm_int8; SRC=examples/matmul_tn.tle; IN=i8; OUTT=i32 ;;
  tf32) PRE=mm_tf32; SRC=examples/matmul_tn.tle; IN=fp32; OUTT=fp32 ;;
  *) echo "DTYPE must be fp16, bf16, fp8e4nv, int8 or tf32" >&2; exit 2 ;;
esac
# The other sources (fp16 or bf16 only) and their cubins' prefixes.
declare -A SOURCE_PREFIX=([matmul_tma]=mmtma [matmul_persistent]=mmpers [matmul_ws]=mmws
                          [matmul_persistent_tma]=mmptma [matmul_persistent_ws]=mmpws [matmul_epilogue]=mmepi
                          [matmul_splitk_cluster]=mmskc [matmul_decode]=mmdec)
S="${SOURCE:-matmul}"
if [[ "$S" != matmul ]]; then
  [[ -n "${SOURCE_PREFIX[$S]:-}" ]] || { echo "SOURCE must be matmul, ${!SOURCE_PREFIX[*]}" >&2; exit 2; }
  [[ "$DT" == fp16 || "$DT" == bf16 ]] || { echo "SOURCE=$S is fp16 or bf16" >&2; exit 2; }
  SRC=examples/$S.tle; PRE=${PRE/mm/${SOURCE_PREFIX[$S]}}
fi
# matmul_splitk_cluster's last constexpr is SPLIT_K (the others' is GROUP_M = 8).
LAST=8
if [[ "$S" == matmul_splitk_cluster ]]; then
  LAST="${SPLIT_K:-2}"; PRE=${PRE/mmskc/mmskc$LAST}
fi
# matmul_epilogue takes a bias pointer (input dtype) after C.
BIAS=""
[[ "$S" == matmul_epilogue ]] && BIAS="*$IN:16, "
mkdir -p "$OUT"
for c in "${CONFIGS[@]}"; do
  IFS=x read -r bm bn bk w s <<<"$c"
  "$TLEC" "$ROOT/$SRC" --arch sm_90a -w "$w" -ns "$s" \
    -s "*$IN:16, *$IN:16, *$OUTT:16, $BIAS""i32:16, i32:16, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, $bm, $bn, $bk, $LAST" \
    -o "$OUT/${PRE}_${bm}x${bn}x${bk}_w${w}_s${s}.sm_90a.cubin"
done
