import { describe, expect, it } from "vitest"
import { type BuildMetadata, imageSection } from "./build-metadata.ts"
import { baseImage } from "./build-step.ts"

const build: BuildMetadata = {
  kind: "container-image",
  source_commit: "a".repeat(40),
  source_ref: "main",
  tag: "aaaaaaa",
  recipe_commit: "b".repeat(40),
  compiler: "cc (Debian 12.2.0-14+deb12u1) 12.2.0",
  libc: "glibc 2.36",
  base_image: "scratch (libraries from debian:bookworm-slim)",
  image_arch: "x86_64",
  python: "none",
  built_by_workflow: false,
  libsvc_sha256: "c".repeat(64)
}

describe("imageSection", () => {
  it("takes the build's metadata and the measured digests; the files match when the library is the built one", () => {
    const image = imageSection(build, { svc_sha256: "d".repeat(64), libsvc_sha256: "c".repeat(64) })
    expect(image).toMatchObject({
      ...build,
      files_match_build: true,
      svc_sha256: "d".repeat(64),
      digest: null,
      gpu_backend: null
    })
    expect(imageSection(build, { svc_sha256: null, libsvc_sha256: "e".repeat(64) }).files_match_build).toBe(false)
  })

  it("says dev for what only a build knows when running from source", () => {
    const image = imageSection(undefined, { svc_sha256: null, libsvc_sha256: null })
    expect(image).toMatchObject({
      source_commit: "dev",
      compiler: "dev",
      files_match_build: false,
      svc_sha256: null,
      python: "none"
    })
  })
})

describe("baseImage", () => {
  it("names the final FROM and the stages its libraries come from", () => {
    expect(baseImage("FROM debian:bookworm-slim AS rootfs\nRUN x\nFROM scratch\nCOPY a b\n")).toBe(
      "scratch (libraries from debian:bookworm-slim)"
    )
    expect(baseImage("FROM alpine:3.20\n")).toBe("alpine:3.20")
    expect(baseImage("")).toBe("unknown")
  })
})
