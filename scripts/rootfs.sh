#!/bin/sh
# Lays out the root file system of a FROM-scratch image: the executable at /, exactly the
# shared libraries `ldd` names (at the paths the dynamic loader looks for them), and a
# world-writable /tmp, where Bun extracts the embedded native scorer library at run time.
# Further executables (the services that decode encoded inputs add Debian's /usr/bin/ffmpeg and
# /usr/bin/ffprobe) are copied at their own absolute paths with the libraries ldd names for
# them, and the Debian copyright file of every package a copied file comes from goes to
# /usr/share/doc/<package>/copyright (the licences travel with the binaries).
# Used by every Dockerfile and by the chroot test that proves the recipe without Docker.
# Usage: rootfs.sh EXECUTABLE OUTDIR [EXTRA_EXECUTABLE...]
set -eu
exe=$1
out=$2
shift 2
[ -x "$exe" ] || { echo "rootfs.sh: $exe is not an executable" >&2; exit 2; }
mkdir -p "$out/tmp"
chmod 1777 "$out/tmp"
cp "$exe" "$out/$(basename "$exe")"

licensed=$(mktemp)
trap 'rm -f "$licensed"' EXIT

# Copies $1 to the same absolute path under $out, once; with a second argument, also notes the
# names dpkg may know it by (the /lib or /usr/lib path, the link's target) for the licences.
place() {
  [ -e "$out$1" ] && return 0
  mkdir -p "$out$(dirname "$1")"
  cp -L "$1" "$out$1"
  if [ "$#" -gt 1 ]; then printf '%s\n%s\n/usr%s\n' "$1" "$(readlink -f "$1")" "$1" >>"$licensed"; fi
}

# ldd lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
libraries() {
  ldd "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) { print $i; break } }'
}

for lib in $(libraries "$exe"); do place "$lib"; done
for extra in "$@"; do
  [ -x "$extra" ] || { echo "rootfs.sh: $extra is not an executable" >&2; exit 2; }
  place "$extra" licence
  for lib in $(libraries "$extra"); do place "$lib" licence; done
done

# One dpkg query for every copied file: "package[:arch]: /path" lines.
if [ -s "$licensed" ] && command -v dpkg >/dev/null 2>&1; then
  for pkg in $(sort -u "$licensed" | xargs dpkg -S 2>/dev/null | cut -d: -f1 | tr ',' '\n' | sed 's/ //g' | sort -u); do
    if [ -f "/usr/share/doc/$pkg/copyright" ]; then
      mkdir -p "$out/usr/share/doc/$pkg"
      cp "/usr/share/doc/$pkg/copyright" "$out/usr/share/doc/$pkg/copyright"
    fi
  done
fi
