#!/usr/bin/env bash
# Builds the cubins bench/struct_gemm_bench.py times: every kernel variant of
# bench/struct_gemm/matmul_struct_ws.tle for each dtype and BMxBNxBKxWARPSxSTAGES[xSPLIT] config
# (SPLIT: EPILOGUE_SPLIT, the epilogue in SPLIT column blocks; default 1).
# Usage: bench/struct_gemm/build.sh TLEC OUT_DIR "fp16 bf16" "ws wsp mc mcp" 128x256x64x8x3 [...]
# Variants: ws   matmul_struct_ws (one tile per program)
#           wsp  matmul_struct_ws_persistent (at most one program per SM)
#           mc   matmul_struct_ws_mc, PERSISTENT=0 (clusters of 2 sharing B by TMA multicast)
#           mcp  matmul_struct_ws_mc, PERSISTENT=1
#           wspt matmul_struct_ws_persistent, B_KMAJOR=True (B given transposed, [N, K]: fp8 needs it)
#           wspe matmul_struct_ws_persistent, EPILOGUE_TMA=True (the tile stored by one TMA store)
#           wspp matmul_struct_ws_pingpong (two consumer warpgroups on alternate tiles; WARPS 4)
#           wsps matmul_struct_ws_storer (wsp with a storer warpgroup: the epilogue off the consumers' path)
#           wspk matmul_struct_ws_streamk (wsp whose last two waves are split along K: stream-K)
# Dtypes: fp16, bf16 (C the same), fp8e4nv (C bf16).
# Cubins: OUT_DIR/struct_<variant>_<dtype>_<BM>x<BN>x<BK>_w<W>_s<S>[_e<SPLIT>].sm_90a.cubin
set -euo pipefail
TLEC=$1 OUT=$2 DTYPES=$3 VARIANTS=$4
shift 4
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/matmul_struct_ws.tle"
mkdir -p "$OUT"
for dt in $DTYPES; do for v in $VARIANTS; do for cfg in "$@"; do
  IFS=x read -r bm bn bk w s e <<< "$cfg"
  cdt=$dt; [[ $dt == fp8e4nv ]] && cdt=bf16
  sig="*$dt:16, *$dt:16, *$cdt:16, i32, i32:16, i32:16, $bm, $bn, $bk, $s"
  case $v in
    ws) name=matmul_struct_ws ;;
    wsp) name=matmul_struct_ws_persistent ;;
    mc) name=matmul_struct_ws_mc sig="$sig, 0" ;;
    mcp) name=matmul_struct_ws_mc sig="$sig, 1" ;;
    wspt) name=matmul_struct_ws_persistent sig="$sig, ${e:-1}, True" e_sig=1 ;;
    wspe) name=matmul_struct_ws_persistent sig="$sig, ${e:-1}, False, True" e_sig=1 ;;
    wspp) name=matmul_struct_ws_pingpong ;;
    wsps) name=matmul_struct_ws_storer ;;
    wspk) name=matmul_struct_ws_streamk sig="*$dt:16, *$dt:16, *$cdt:16, *fp32:16, *i32:16, i32, i32:16, i32:16, $bm, $bn, $bk, $s" ;;
    *) echo "unknown variant $v" >&2; exit 2 ;;
  esac
  [[ -n "$e" && -z "${e_sig:-}" ]] && sig="$sig, $e"
  e_sig=
  "$TLEC" "$SRC" -n "$name" -w "$w" --arch sm_90a -s "$sig" \
    -o "$OUT/struct_${v}_${dt}_${bm}x${bn}x${bk}_w${w}_s${s}${e:+_e$e}.sm_90a.cubin"
done; done; done
