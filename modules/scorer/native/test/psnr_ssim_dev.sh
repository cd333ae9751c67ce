#!/bin/sh
# Developer check of psnr, float_ssim and float_ms_ssim against the fixtures' libvmaf goldens
# for the scalar and AVX2 backends. The goldens have 6 decimals, so --tol=1e-6 asserts a match
# to the printed precision; AVX2 output must also be byte-identical to scalar. Then the reader
# test. Run from anywhere; exits non-zero on any failure.
set -eu
cd "$(dirname "$0")/.."
FIX=${FIXTURES:-../../../test/fixtures}  # raw pairs restored by npm run fixtures
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CC=${CC:-cc}
# For sanitizer builds (EXTRA_CFLAGS=-fsanitize=...): the dev harness never frees its buffers.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
FLAGS="-O2 -std=c11 -Wall -Wextra -Werror -ffp-contract=off -Isrc ${EXTRA_CFLAGS:-}"
SSIM="src/feature/float_ssim.c src/feature/x86/float_ssim_avx2.c"
for ex in psnr float_ssim float_ms_ssim; do
    case $ex in
    psnr) srcs=src/feature/psnr.c ;;
    float_ssim) srcs=$SSIM ;;
    float_ms_ssim) srcs="$SSIM src/feature/float_ms_ssim.c src/feature/x86/float_ms_ssim_avx2.c" ;;
    esac
    $CC $FLAGS -DEXTRACTOR=svc_extractor_$ex test/extractor_dev.c src/picture.c src/cpu.c $srcs \
        -lm -o "$OUT/$ex"
done
$CC $FLAGS -pthread test/reader_test.c src/reader.c src/picture.c -o "$OUT/reader_test"
status=0
while read -r line; do
    set -- $(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["name"], d["width"], d["height"], d["pixel_format"], d["bitdepth"])')
    for be in scalar avx2; do
        : >"$OUT/$1.$be"
        for ex in psnr float_ssim float_ms_ssim; do
            "$OUT/$ex" "$FIX/$1.ref.yuv" "$FIX/$1.dis.yuv" "$2" "$3" "$4" "$5" "$be" >>"$OUT/$1.$be" 2>/dev/null
        done
        echo "== $1 $be"
        python3 test/compare_golden.py --tol=1e-6 "$OUT/$1.$be" "$FIX/$1.libvmaf.json" || status=1
    done
    cmp -s "$OUT/$1.scalar" "$OUT/$1.avx2" || { echo "FAIL $1: avx2 differs from scalar"; status=1; }
done <"$FIX/index.jsonl"
"$OUT/reader_test" || status=1
exit $status
