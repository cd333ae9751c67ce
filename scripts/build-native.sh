#!/usr/bin/env bash
# Builds the native scorer: modules/scorer/native/build/libsvc_scorer.so and the C test programs
# (scorer_cli, scorer_test, reader_test, simd_test, feed_test, registry_test) beside it, and svc-exec (the
# decoders' launcher, modules/inputs/native/svc_exec.c) there too. From the environment: CC, EXTRA_CFLAGS (e.g.
# -fsanitize=address,undefined) and OUT_DIR (another build folder, e.g. for sanitizer builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
native="$root/modules/scorer/native"
out=${OUT_DIR:-$native/build}
mkdir -p "$out/obj"
cc=${CC:-cc}
# -ffp-contract=off everywhere: no fused multiply-adds, so every backend rounds like the reference.
cflags=(-std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror -ffp-contract=off ${EXTRA_CFLAGS:-})

# Compiles run side by side, one per core: a fresh clone (CI) builds every file.
jobs_max=$(nproc 2>/dev/null || echo 2)
pending=()
# Runs a command in the background; with jobs_max running, first waits for the oldest (its
# failure stops the build, as set -e has it).
in_background() {
    "$@" &
    pending+=($!)
    if ((${#pending[@]} >= jobs_max)); then
        wait "${pending[0]}"
        pending=("${pending[@]:1}")
    fi
}
wait_all() {
    for pid in "${pending[@]}"; do wait "$pid"; done
    pending=()
}

objs=()
# Every C file under src/ (the scorer, feature/ extractors, feature/x86/ kernels); objects are named
# by their path under src/ so files of one name in two folders cannot collide.
while IFS= read -r src; do
    rel=${src#"$native/src/"}
    name=$(basename "$src" .c)
    obj=${rel%.c}
    obj=${obj//\//_}
    extra=()
    case "$name" in
    *_avx2) extra=(-mavx2) ;;
    *_avx512) extra=(-mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512cd) ;;
    esac
    in_background "$cc" "${cflags[@]}" "${extra[@]}" -c "$src" -o "$out/obj/$obj.o"
    objs+=("$out/obj/$obj.o")
    # AVX-512 kernels that use SVC_AVX512_VNNI are built a second time for AVX512-VNNI CPUs
    # (their _vnni symbols).
    if [[ $name == *_avx512 ]] && grep -q SVC_AVX512_VNNI "$src"; then
        in_background "$cc" "${cflags[@]}" "${extra[@]}" -mavx512vnni -DSVC_AVX512_VNNI -c "$src" -o "$out/obj/${obj}_vnni.o"
        objs+=("$out/obj/${obj}_vnni.o")
    fi
done < <(find "$native/src" -name '*.c' | LC_ALL=C sort)
wait_all
"$cc" "${cflags[@]}" -shared -Wl,--no-undefined "${objs[@]}" -lm -o "$out/libsvc_scorer.so"

for prog in scorer_cli scorer_test reader_test simd_test feed_test registry_test; do
    in_background "$cc" "${cflags[@]}" "$native/test/$prog.c" -L"$out" -Wl,-rpath,'$ORIGIN' -lsvc_scorer -lm \
        -o "$out/$prog"
done
wait_all
# Static: the executables embed it and run it on hosts without a C library of the same version.
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -static -s ${EXTRA_CFLAGS:-} "$root/modules/inputs/native/svc_exec.c" -o "$out/svc-exec" 2>/dev/null ||
    "$cc" -std=c11 -O2 -Wall -Wextra -Werror ${EXTRA_CFLAGS:-} "$root/modules/inputs/native/svc_exec.c" -o "$out/svc-exec"
echo "built $out/libsvc_scorer.so and $out/svc-exec"
