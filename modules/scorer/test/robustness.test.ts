/**
 * Bad input never crashes the process: random geometry, truncated and garbage files come back
 * as typed errors (or, where the bytes happen to fit, as a score), never as an internal fault.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixture } from "../../../test/support/fixtures.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

const runtime = scorerRuntime()
const work = mkdtempSync(join(tmpdir(), "svc-robust-"))
afterAll(async () => {
  await runtime.dispose()
  rmSync(work, { recursive: true, force: true })
})

const clientErrors = new Set([
  "InvalidScoreRequest",
  "UnreadableInput",
  "InputNotFound",
  "UnsupportedInput",
  "InvalidGeometry",
  "UnknownModel"
])

/** Scores and classifies: "ok" or the error's tag. Internal faults fail the property. */
const outcome = async (body: unknown): Promise<string> => {
  const result = await runtime.runPromise(Effect.either(scoreBody(body)))
  if (result._tag === "Right") return "ok"
  expect(clientErrors, `${result.left._tag}: ${result.left.message}`).toContain(result.left._tag)
  return result.left._tag
}

const v01 = fixture("v01")
const pixelFormat = fc.constantFrom("420", "422", "444")
const bitdepth = fc.constantFrom(8, 10, 12, 16)

describe("random geometry on real files", () => {
  it("scores or refuses with a typed error", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 700 }),
        fc.integer({ min: 1, max: 500 }),
        pixelFormat,
        bitdepth,
        async (width, height, pixel_format, depth) => {
          await outcome({
            reference: v01.reference,
            distorted: v01.distorted,
            options: { width, height, pixel_format, bitdepth: depth, frame_cnt: 2 }
          })
        }
      ),
      { numRuns: 60, seed: 20261121 }
    )
  })

  it("refuses a geometry whose frame does not divide the file", async () => {
    expect(
      await outcome({ reference: v01.reference, distorted: v01.distorted, options: { width: 321, height: 240 } })
    ).toBe("InvalidGeometry")
  })
})

describe("truncated and garbage files", () => {
  const original = readFileSync(v01.distorted)
  it("refuses a truncated distorted file", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.length - 1 }), async (length) => {
        const path = join(work, `truncated-${length}.yuv`)
        writeFileSync(path, original.subarray(0, length))
        const result = await outcome({
          reference: v01.reference,
          distorted: path,
          options: { width: 320, height: 240 }
        })
        // A cut at a frame boundary is a shorter, valid clip: the pair's frame counts differ.
        expect(result).not.toBe("ok")
        rmSync(path)
      }),
      { numRuns: 25, seed: 7 }
    )
  })

  it("never crashes on random bytes named .yuv or .y4m, with or without a Y4M header", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 0, maxLength: 4096 }),
        fc.option(
          fc.tuple(
            fc.integer({ min: -5, max: 5000 }),
            fc.integer({ min: -5, max: 5000 }),
            fc.constantFrom("", " C420", " C422p10", " C444p12", " Cmono", " C411", " Cjunk")
          )
        ),
        fc.boolean(),
        async (bytes, header, named4m) => {
          const suffix = named4m ? "y4m" : "yuv"
          const prefix = header
            ? Buffer.from(`YUV4MPEG2 W${header[0]} H${header[1]}${header[2]} F25:1\nFRAME\n`)
            : Buffer.alloc(0)
          const path = join(work, `garbage.${suffix}`)
          writeFileSync(path, Buffer.concat([prefix, bytes]))
          await outcome({ reference: path, distorted: path, options: { width: 16, height: 16 } })
        }
      ),
      { numRuns: 80, seed: 42 }
    )
  })

  it("names a missing input as missing", async () => {
    expect(
      await outcome({
        reference: join(work, "absent.yuv"),
        distorted: v01.distorted,
        options: { width: 320, height: 240 }
      })
    ).toBe("InputNotFound")
  })

  it("refuses a pair whose geometry differs (Y4M headers disagree)", async () => {
    const a = join(work, "a.y4m")
    const b = join(work, "b.y4m")
    writeFileSync(
      a,
      Buffer.concat([Buffer.from("YUV4MPEG2 W16 H16 F25:1 C420\nFRAME\n"), Buffer.alloc((16 * 16 * 3) / 2, 128)])
    )
    writeFileSync(
      b,
      Buffer.concat([Buffer.from("YUV4MPEG2 W32 H16 F25:1 C420\nFRAME\n"), Buffer.alloc((32 * 16 * 3) / 2, 128)])
    )
    expect(await outcome({ reference: a, distorted: b })).toBe("InvalidGeometry")
  })
})
