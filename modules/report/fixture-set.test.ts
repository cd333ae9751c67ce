import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { loadFixtureSet, parseFixtureIndex } from "./fixture-set.ts"

const line =
  '{"name":"v01_x","width":320,"height":240,"pixel_format":"420","bitdepth":8,"frames":30,"source":"testsrc2"}'

describe("parseFixtureIndex", () => {
  it("gives each fixture its pair and golden file in the directory", () => {
    expect(parseFixtureIndex("/f", `${line}\n\n`)).toEqual({
      kind: "found",
      dir: "/f",
      fixtures: [
        {
          name: "v01_x",
          width: 320,
          height: 240,
          pixel_format: "420",
          bitdepth: 8,
          frames: 30,
          reference: "/f/v01_x.ref.yuv",
          distorted: "/f/v01_x.dis.yuv",
          golden: "/f/v01_x.libvmaf.json"
        }
      ]
    })
  })

  it("refuses the set at a malformed line or a name with a path, naming the line", () => {
    expect(parseFixtureIndex("/f", `${line}\n{"name":"v02"}`)).toMatchObject({
      kind: "absent",
      reason: expect.stringContaining("/f/index.jsonl line 2")
    })
    expect(parseFixtureIndex("/f", line.replace("v01_x", "../etc/x"))).toMatchObject({ kind: "absent" })
    expect(parseFixtureIndex("/f", "\n")).toEqual({ kind: "absent", reason: "/f/index.jsonl lists no fixture" })
  })
})

describe("loadFixtureSet", () => {
  it("says why when the directory has no index", async () => {
    expect(await Effect.runPromise(loadFixtureSet("/nonexistent/fixtures"))).toEqual({
      kind: "absent",
      reason: "no fixture set: /nonexistent/fixtures/index.jsonl cannot be read"
    })
  })
})
