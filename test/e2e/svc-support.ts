/** Helpers of the `svc` client's end-to-end tests: running it, the reference tool's layouts, parsing them. */
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Fixture } from "../support/fixtures.ts"
import { builtinModelDir, fixturesDir, modelDirEnv, requireBuilt, runCommand } from "../../local/executables.ts"

export const extraFeatures = ["psnr", "float_ssim", "float_ms_ssim"] as const

export const scratchDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))

/** Runs the compiled svc with SVC_MODEL_DIR set (in `cwd`, default the repository). */
export const svc = (args: ReadonlyArray<string>, env: Record<string, string> = {}, cwd?: string) =>
  runCommand([requireBuilt("svc"), ...args], { env: { ...modelDirEnv, ...env }, ...(cwd === undefined ? {} : { cwd }) })

/** The file a model name resolves to for this run: SVC_MODEL_DIR's, else the built-in. */
export const modelFile = (name: string) => join(process.env.SVC_MODEL_DIR || builtinModelDir, `${name}.json`)

export const geometryArgs = (entry: Fixture) => [
  "-w",
  String(entry.width),
  "--height",
  String(entry.height),
  "--pixel_format",
  entry.pixel_format,
  "--bitdepth",
  String(entry.bitdepth)
]

/**
 * The reference libvmaf tool's output of a fixture in one layout (json, xml, csv, sub), recorded
 * once with the fixture's extra features (`bun scripts/fixtures.ts record`, test/fixtures/README.md).
 */
export const referenceOutput = (entry: Fixture, format: string): string =>
  readFileSync(join(fixturesDir, `${entry.name}.layout.${format}`), "utf8")

/** Elements of an XML text as [tag, attribute names] (closing tags included as "/tag"). */
export const xmlShape = (text: string): ReadonlyArray<readonly [string, ReadonlyArray<string>]> =>
  [...text.matchAll(/<(\/?[A-Za-z_]+)([^>]*)>/g)].map(
    (match) => [match[1] ?? "", [...(match[2] ?? "").matchAll(/([A-Za-z_0-9]+)="/g)].map((a) => a[1] ?? "")] as const
  )

/** Attribute values of an XML element's opening tag. */
export const xmlAttributes = (element: string): Record<string, string> =>
  Object.fromEntries([...element.matchAll(/([A-Za-z_0-9]+)="([^"]*)"/g)].map((match) => [match[1], match[2]]))
