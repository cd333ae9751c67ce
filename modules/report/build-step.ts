// svc-tester-report's part of `npm run build` (scripts/build.ts, after the native library
// builds): records the build metadata for --define SVC_BUILD_IMAGE and the scalar reference
// values (record-reference.ts, in its own process: it loads the native library just built).
import { $ } from "bun"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import os from "node:os"
import { type BuildMetadata, packageKind } from "./build-metadata.ts"

const libraryFile = "modules/scorer/native/build/libsvc_scorer.so"
const dockerfile = "apps/svc-tester-report/Dockerfile"

/** First line of a command's output, or "unknown" when it fails. */
const firstLine = async (command: ReturnType<typeof $>): Promise<string> => {
  const result = await command.nothrow().quiet()
  const line = result.stdout.toString().split("\n")[0]?.trim() ?? ""
  return result.exitCode === 0 && line !== "" ? line : "unknown"
}

/** "scratch (libraries from debian:bookworm-slim)": the last FROM is the base, earlier ones stages. */
export const baseImage = (dockerfileText: string): string => {
  const froms = [...dockerfileText.matchAll(/^FROM\s+(\S+)/gim)].map((match) => match[1] ?? "")
  const base = froms.at(-1)
  if (base === undefined) return "unknown"
  return froms.length > 1 ? `${base} (libraries from ${froms.slice(0, -1).join(", ")})` : base
}

export const collectBuildMetadata = async (): Promise<BuildMetadata> => {
  const cc = process.env.CC ?? "cc"
  const glibc = await firstLine($`getconf GNU_LIBC_VERSION`)
  let dockerfileText = ""
  try {
    dockerfileText = readFileSync(dockerfile, "utf8")
  } catch {
    // No recipe beside the app: base_image says "unknown".
  }
  return {
    kind: packageKind(process.platform),
    source_commit: await firstLine($`git rev-parse HEAD`),
    source_ref: await firstLine($`git rev-parse --abbrev-ref HEAD`),
    tag: await firstLine($`git describe --tags --always --dirty`),
    recipe_commit: await firstLine($`git log -1 --format=%H -- scripts ${dockerfile}`),
    compiler: await firstLine($`${cc} --version`),
    libc: glibc !== "unknown" ? glibc : await firstLine($`ldd --version`),
    base_image: baseImage(dockerfileText),
    image_arch: os.machine(),
    python: "none",
    built_by_workflow: process.env.CI === "true" || process.env.GITHUB_ACTIONS === "true",
    libsvc_sha256: createHash("sha256").update(readFileSync(libraryFile)).digest("hex")
  }
}

/** Records the reference values and returns the extra `bun build` arguments of svc-tester-report. */
export const testerReportBuildStep = async (): Promise<ReadonlyArray<string>> => {
  await $`${process.execPath} modules/report/record-reference.ts`
  return ["--define", `SVC_BUILD_IMAGE=${JSON.stringify(await collectBuildMetadata())}`]
}
