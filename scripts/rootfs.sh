#!/bin/sh
# Lays out the root file system of a FROM-scratch image: the executable at /, exactly the
# shared libraries `ldd` names (at the paths the dynamic loader looks for them), and a
# world-writable /tmp, where Bun extracts the embedded native scorer library at run time.
# Used by every Dockerfile and by the chroot test that proves the recipe without Docker.
# Usage: rootfs.sh EXECUTABLE OUTDIR
set -eu
exe=$1
out=$2
[ -x "$exe" ] || { echo "rootfs.sh: $exe is not an executable" >&2; exit 2; }
mkdir -p "$out/tmp"
chmod 1777 "$out/tmp"
cp "$exe" "$out/$(basename "$exe")"
# ldd lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
ldd "$exe" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) { print $i; break } }' | while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
