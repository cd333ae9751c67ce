// The golden fixture set in a directory (SVC_FIXTURES_DIR): `index.jsonl` names each pair and
// its raw geometry; NAME.ref.yuv, NAME.dis.yuv and NAME.libvmaf.json lie beside it.
import { Effect, Either, ParseResult, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { join } from "node:path"

const FixtureEntry = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._-]+$/)),
  width: Schema.Int,
  height: Schema.Int,
  pixel_format: Schema.Literal("420", "422", "444"),
  bitdepth: Schema.Literal(8, 10, 12, 16),
  frames: Schema.Int
})

export interface Fixture extends Schema.Schema.Type<typeof FixtureEntry> {
  readonly reference: string
  readonly distorted: string
  /** What libvmaf reported for the pair. */
  readonly golden: string
}

export type FixtureSet =
  | { readonly kind: "found"; readonly dir: string; readonly fixtures: ReadonlyArray<Fixture> }
  | { readonly kind: "absent"; readonly reason: string }

// Extra index fields (source, distortion) describe the pair and are not needed here.
const decodeEntry = Schema.decodeUnknownEither(Schema.parseJson(FixtureEntry))

/** Parses index.jsonl; a malformed line makes the whole set unusable, naming the line. */
export const parseFixtureIndex = (dir: string, text: string): FixtureSet => {
  const fixtures: Array<Fixture> = []
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue
    const entry = decodeEntry(line)
    if (Either.isLeft(entry)) {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(entry.left)
      return { kind: "absent", reason: `${join(dir, "index.jsonl")} line ${index + 1}: ${issue?.message ?? "invalid"}` }
    }
    const { name } = entry.right
    fixtures.push({
      ...entry.right,
      reference: join(dir, `${name}.ref.yuv`),
      distorted: join(dir, `${name}.dis.yuv`),
      golden: join(dir, `${name}.libvmaf.json`)
    })
  }
  return fixtures.length === 0
    ? { kind: "absent", reason: `${join(dir, "index.jsonl")} lists no fixture` }
    : { kind: "found", dir, fixtures }
}

/** The fixture set of `dir`, or why there is none (no directory, no index). Never fails. */
export const loadFixtureSet = (dir: string): Effect.Effect<FixtureSet> =>
  Effect.tryPromise(() => readFile(join(dir, "index.jsonl"), "utf8")).pipe(
    Effect.map((text) => parseFixtureIndex(dir, text)),
    Effect.orElseSucceed(
      (): FixtureSet => ({
        kind: "absent",
        reason: `no fixture set: ${join(dir, "index.jsonl")} cannot be read`
      })
    )
  )
