#!/usr/bin/env bash
# Dev check for integer_adm: builds the harness, runs every golden fixture on the given
# backends (default: scalar avx2) and compares with libvmaf's values. The goldens are printed
# to 6 decimals, so an exact implementation shows max|diff| <= 5e-7.
# Usage: test/adm_check_all.sh [scalar] [avx2]   (from modules/scorer/native)
set -euo pipefail
cd "$(dirname "$0")/.."
FIX=${FIXTURES:-../../../test/fixtures}  # raw pairs restored by npm run fixtures
BIN=${TMPDIR:-/tmp}/adm_dev
srcs=(test/extractor_dev.c src/picture.c src/cpu.c src/feature/integer_adm.c)
extra=()
if [ -f src/feature/x86/integer_adm_avx2.c ]; then
  cc -O2 -std=c11 -Wall -Wextra -mavx2 -Isrc -c src/feature/x86/integer_adm_avx2.c -o "$BIN.avx2.o"
  extra=("$BIN.avx2.o")
fi
cc -O2 -std=c11 -Wall -Wextra -DEXTRACTOR=svc_extractor_integer_adm -Isrc "${srcs[@]}" "${extra[@]}" -lm -o "$BIN"
backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(scalar avx2)
status=0
while IFS= read -r line; do
  name=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["name"])' "$line")
  geo=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["width"], d["height"], d["pixel_format"], d["bitdepth"])' "$line")
  for be in "${backends[@]}"; do
    out="${TMPDIR:-/tmp}/adm_$name.$be.txt"
    # shellcheck disable=SC2086
    "$BIN" "$FIX/$name.ref.yuv" "$FIX/$name.dis.yuv" $geo "$be" > "$out" 2>/dev/null
    echo "== $name ($be)"
    python3 test/compare_golden.py "$out" "$FIX/$name.libvmaf.json" || status=1
  done
  if [ ${#backends[@]} -gt 1 ]; then
    cmp -s "${TMPDIR:-/tmp}/adm_$name.${backends[0]}.txt" "${TMPDIR:-/tmp}/adm_$name.${backends[1]}.txt" \
      && echo "   ${backends[0]} and ${backends[1]} outputs identical" \
      || { echo "   ${backends[0]} and ${backends[1]} outputs DIFFER"; status=1; }
  fi
done < "$FIX/index.jsonl"
exit $status
