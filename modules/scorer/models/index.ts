/**
 * The public VMAF models (BSD-2-Clause-Patent, see LICENSE beside them), embedded in every
 * executable that scores: `with { type: "file" }` gives a path, inside a compiled executable the
 * embedded copy's, so the bytes read (and hashed for provenance) are the file's exact bytes.
 */
import vmaf_4k_v0_6_1 from "./vmaf_4k_v0.6.1.json" with { type: "file" }
import vmaf_4k_v0_6_1neg from "./vmaf_4k_v0.6.1neg.json" with { type: "file" }
import vmaf_b_v0_6_3 from "./vmaf_b_v0.6.3.json" with { type: "file" }
import vmaf_float_4k_v0_6_1 from "./vmaf_float_4k_v0.6.1.json" with { type: "file" }
import vmaf_float_b_v0_6_3 from "./vmaf_float_b_v0.6.3.json" with { type: "file" }
import vmaf_float_v0_6_1 from "./vmaf_float_v0.6.1.json" with { type: "file" }
import vmaf_float_v0_6_1neg from "./vmaf_float_v0.6.1neg.json" with { type: "file" }
import vmaf_v0_6_1 from "./vmaf_v0.6.1.json" with { type: "file" }
import vmaf_v0_6_1neg from "./vmaf_v0.6.1neg.json" with { type: "file" }
import vmaf_v1_0_16_1d5h_2160 from "./vmaf_v1.0.16_1d5h_2160.json" with { type: "file" }
import vmaf_v1_0_16_3d0h from "./vmaf_v1.0.16_3d0h.json" with { type: "file" }
import vmaf_v1_0_16_3d0h_2160 from "./vmaf_v1.0.16_3d0h_2160.json" with { type: "file" }
import vmaf_v1_0_16_5d0h from "./vmaf_v1.0.16_5d0h.json" with { type: "file" }

/** The imports above are paths (typed as JSON by the compiler, which does not know `type: "file"`). */
const path = (imported: unknown): string => {
  if (typeof imported !== "string") throw new Error("a built-in model import is not a file path")
  return imported
}

/** Model name (the file name without ".json") to the embedded file. */
export const builtinModelFiles: ReadonlyMap<string, string> = new Map([
  ["vmaf_4k_v0.6.1", path(vmaf_4k_v0_6_1)],
  ["vmaf_4k_v0.6.1neg", path(vmaf_4k_v0_6_1neg)],
  ["vmaf_b_v0.6.3", path(vmaf_b_v0_6_3)],
  ["vmaf_float_4k_v0.6.1", path(vmaf_float_4k_v0_6_1)],
  ["vmaf_float_b_v0.6.3", path(vmaf_float_b_v0_6_3)],
  ["vmaf_float_v0.6.1", path(vmaf_float_v0_6_1)],
  ["vmaf_float_v0.6.1neg", path(vmaf_float_v0_6_1neg)],
  ["vmaf_v0.6.1", path(vmaf_v0_6_1)],
  ["vmaf_v0.6.1neg", path(vmaf_v0_6_1neg)],
  ["vmaf_v1.0.16_1d5h_2160", path(vmaf_v1_0_16_1d5h_2160)],
  ["vmaf_v1.0.16_3d0h", path(vmaf_v1_0_16_3d0h)],
  ["vmaf_v1.0.16_3d0h_2160", path(vmaf_v1_0_16_3d0h_2160)],
  ["vmaf_v1.0.16_5d0h", path(vmaf_v1_0_16_5d0h)]
])
