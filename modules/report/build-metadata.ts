// The report's `image` section. scripts/build.ts records what only the build knows (commit,
// compiler, libc, base image, the library it embedded) with `--define SVC_BUILD_IMAGE=<json>`;
// run from source there is no such constant and the fields say "dev".
import { buildInfo } from "../runtime/build-info.ts"
import type { Image } from "./schema.ts"

export interface BuildMetadata {
  readonly kind: Image["kind"]
  /** Full git commit of the sources. */
  readonly source_commit: string
  /** Branch (or "HEAD" when detached). */
  readonly source_ref: string
  /** `git describe --tags --always --dirty`: the tag of the commit, else its short hash; "-dirty" when the tree had changes. */
  readonly tag: string
  /** Last commit that changed the build recipe (scripts/, the Dockerfile). */
  readonly recipe_commit: string
  /** First line of `cc --version`. */
  readonly compiler: string
  readonly libc: string
  /** The image's FROM lines: the final base and the stage its libraries come from. */
  readonly base_image: string
  /** uname -m of the build. */
  readonly image_arch: string
  readonly python: string
  /** Built by a CI workflow (CI or GITHUB_ACTIONS set), not on a workstation. */
  readonly built_by_workflow: boolean
  /** sha256 of the native library the build embedded. */
  readonly libsvc_sha256: string
}

declare const SVC_BUILD_IMAGE: BuildMetadata | undefined

/** The build's metadata; undefined when running from source. */
export const embeddedBuild: BuildMetadata | undefined =
  typeof SVC_BUILD_IMAGE === "object" ? SVC_BUILD_IMAGE : undefined

/** The package kind of a platform: the Linux build ships as a container image. */
export const packageKind = (platform: string): Image["kind"] =>
  platform === "darwin" ? "osb-bundle" : platform === "win32" ? "osc-zip" : "container-image"

export interface MeasuredDigests {
  /** sha256 of the running executable; null from source, where it would be Bun's. */
  readonly svc_sha256: string | null
  /** sha256 of the native library this run loaded. */
  readonly libsvc_sha256: string | null
}

export const imageSection = (build: BuildMetadata | undefined, digests: MeasuredDigests): Image => {
  const dev = "dev"
  return {
    kind: build?.kind ?? packageKind(process.platform),
    source_commit: build?.source_commit ?? dev,
    source_ref: build?.source_ref ?? dev,
    image_arch: build?.image_arch ?? dev,
    compiler: build?.compiler ?? dev,
    libc: build?.libc ?? dev,
    base_image: build?.base_image ?? dev,
    tag: build?.tag ?? dev,
    svc_version: buildInfo.version,
    python: build?.python ?? "none",
    recipe_commit: build?.recipe_commit ?? dev,
    built_by_workflow: build?.built_by_workflow ?? false,
    // The library this run loaded is the one the build recorded: nothing was swapped since.
    files_match_build: build !== undefined && digests.libsvc_sha256 === build.libsvc_sha256,
    // The registry digest is assigned after the image is built; the image cannot know it.
    digest: null,
    svc_sha256: digests.svc_sha256,
    libsvc_sha256: digests.libsvc_sha256,
    gpu_backend: null
  }
}
