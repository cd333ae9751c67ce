#!/usr/bin/env bash
# Builds the native scorer: modules/scorer/native/build/libsvc_scorer.so and the C test programs
# (scorer_cli, scorer_test) beside it. From the environment: CC, EXTRA_CFLAGS (e.g.
# -fsanitize=address,undefined) and OUT_DIR (another build folder, e.g. for sanitizer builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
native="$root/modules/scorer/native"
out=${OUT_DIR:-$native/build}
mkdir -p "$out/obj"
cc=${CC:-cc}
# -ffp-contract=off everywhere: no fused multiply-adds, so every backend rounds like the reference.
cflags=(-std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror -ffp-contract=off ${EXTRA_CFLAGS:-})

objs=()
for src in "$native"/src/*.c; do
    name=$(basename "$src" .c)
    extra=()
    case "$name" in *_avx2) extra=(-mavx2) ;; esac
    "$cc" "${cflags[@]}" "${extra[@]}" -c "$src" -o "$out/obj/$name.o"
    objs+=("$out/obj/$name.o")
done
"$cc" "${cflags[@]}" -shared -Wl,--no-undefined "${objs[@]}" -lm -o "$out/libsvc_scorer.so"

for prog in scorer_cli scorer_test reader_test; do
    "$cc" "${cflags[@]}" "$native/test/$prog.c" -L"$out" -Wl,-rpath,'$ORIGIN' -lsvc_scorer -lm \
        -o "$out/$prog"
done
echo "built $out/libsvc_scorer.so"
