#!/bin/sh
# Developer check of integer VIF and motion against the fixtures' libvmaf goldens, for
# the scalar and AVX2 backends (AVX2 output must also be byte-identical to scalar), then
# the synthetic scalar/AVX2 stress test. Run from anywhere; exits non-zero on any failure.
set -eu
cd "$(dirname "$0")/.."
FIX=${FIXTURES:-../../../test/fixtures}  # raw pairs restored by npm run fixtures
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CC=${CC:-cc}
FLAGS="-O2 -std=c11 -Wall -Wextra -Werror -Isrc"
$CC $FLAGS -DEXTRACTOR=svc_extractor_integer_vif test/extractor_dev.c src/picture.c src/cpu.c \
    src/feature/integer_vif.c src/feature/integer_vif_scalar.c src/feature/x86/integer_vif_avx2.c -lm -o "$OUT/vif_dev"
$CC $FLAGS test/motion_dev.c src/picture.c src/cpu.c src/feature/integer_motion.c src/feature/x86/integer_motion_avx2.c -o "$OUT/motion_dev"
$CC $FLAGS test/vif_motion_stress.c src/picture.c src/cpu.c src/feature/integer_vif.c \
    src/feature/integer_vif_scalar.c src/feature/x86/integer_vif_avx2.c src/feature/integer_motion.c src/feature/x86/integer_motion_avx2.c -lm -o "$OUT/stress"
status=0
while read -r line; do
    set -- $(echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["name"], d["width"], d["height"], d["pixel_format"], d["bitdepth"])')
    for be in scalar avx2; do
        "$OUT/vif_dev" "$FIX/$1.ref.yuv" "$FIX/$1.dis.yuv" "$2" "$3" "$4" "$5" "$be" >"$OUT/$1.vif.$be" 2>/dev/null
        "$OUT/motion_dev" "$FIX/$1.ref.yuv" "$2" "$3" "$4" "$5" "$be" >"$OUT/$1.motion.$be" 2>/dev/null
        echo "== $1 $be"
        cat "$OUT/$1.vif.$be" "$OUT/$1.motion.$be" >"$OUT/$1.all.$be"
        python3 test/compare_golden.py "$OUT/$1.all.$be" "$FIX/$1.libvmaf.json" || status=1
    done
    cmp -s "$OUT/$1.all.scalar" "$OUT/$1.all.avx2" || { echo "FAIL $1: avx2 differs from scalar"; status=1; }
done <"$FIX/index.jsonl"
"$OUT/stress" || status=1
exit $status
