#!/usr/bin/env python3
"""Developer check: compares "frame name value" lines with a fixture's libvmaf JSON.
Prints the largest absolute difference per feature and exits 1 if any exceeds --tol."""
import json, sys, collections
args = [a for a in sys.argv[1:] if not a.startswith("--")]
tol = float(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--tol=")), "1e-4"))
ours_path, golden_path = args
golden = json.load(open(golden_path))["frames"]
worst = collections.defaultdict(lambda: (0.0, -1))
missing = set()
for line in open(ours_path):
    f, name, v = line.split()
    f = int(f); v = float(v)
    g = golden[f]["metrics"].get(name)
    if g is None:
        missing.add(name); continue
    d = abs(v - g)
    if d > worst[name][0] or worst[name][1] < 0: worst[name] = (d, f)
bad = False
for name, (d, f) in sorted(worst.items()):
    flag = "FAIL" if d > tol else "ok"
    bad |= d > tol
    print(f"{flag:4} {name:32} max|diff|={d:.3e} at frame {f}")
for n in sorted(missing): print(f"     {n:32} (not in golden)")
sys.exit(1 if bad else 0)
