/**
 * The reference libvmaf `vmaf` executable the benches run beside svc (a yardstick only, never
 * shipped or called by svc): the path in SVC_REFERENCE_VMAF. Without it the benches print svc's
 * figures alone and say why the reference columns are missing.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"

const configured = process.env.SVC_REFERENCE_VMAF ?? ""

export const referenceVmaf = configured === "" ? "" : resolve(configured)

/** Why the reference columns are left out; undefined when the executable is there. */
export const referenceAbsence: string | undefined =
  configured === ""
    ? "SVC_REFERENCE_VMAF is unset (the path of a libvmaf `vmaf` executable to compare with)"
    : existsSync(referenceVmaf)
      ? undefined
      : `SVC_REFERENCE_VMAF=${configured} does not exist`
