/**
 * A ladder with shots (issue 29), `svc ladder --shots` end to end on the compiled executable: a
 * reference cut from three sources (24 frames each) and two renditions (an mp4 at the
 * reference's size and one at half size, scaled back). Every rendition gets the reference's
 * shots, its own worst shots and their worst frames as pictures (reference beside rendition); the
 * table prints every shot's score per rendition and the HTML report shows the shots' bands, their
 * table and the pictures.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { haveChromium, headlessChromium } from "../support/chromium.ts"
import { writeScenes } from "../../local/clip.ts"
import { ffmpegRun, scratchDir, threeScenes320x180 } from "../support/media.ts"
import { svc } from "./svc-support.ts"

interface Shot {
  readonly first_frame: number
  readonly frame_count: number
  readonly score: number
  readonly worst_frame: number
}
interface Rendition {
  readonly label: string
  readonly shots: ReadonlyArray<Shot>
  readonly worst_shots: ReadonlyArray<number>
  readonly thumbnails: ReadonlyArray<{ frame: number; reference: string; distorted: string }>
}

const scratch = scratchDir("svc-ladder-shots-")
const path = (name: string) => join(scratch.dir, name)
const labels = ["full", "half"] as const

beforeAll(async () => {
  await writeScenes(path("ref.y4m"), { ...threeScenes320x180(24), pixelFormat: "yuv420p" })
  const x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
  ffmpegRun(["-i", path("ref.y4m"), ...x264, "-crf", "30", "-y", path("full.mp4")])
  ffmpegRun(["-i", path("ref.y4m"), "-vf", "scale=160:90", ...x264, "-crf", "34", "-y", path("half.mp4")])
}, 120_000)

afterAll(() => scratch.remove())

const ladderArgs = () => [
  "ladder",
  path("ref.y4m"),
  ...labels.flatMap((label) => ["--rendition", `${label}=${path(`${label}.mp4`)}`]),
  "--shots"
]

describe("svc ladder --shots", () => {
  let renditions: ReadonlyArray<Rendition>

  it("gives every rendition the reference's shots, its worst shots and their pictures", async () => {
    const result = await svc([...ladderArgs(), "--format", "json", "--html", path("ladder.html"), "-q"])
    expect(result.code, result.stderr).toBe(0)
    renditions = (JSON.parse(result.stdout) as { renditions: ReadonlyArray<Rendition> }).renditions
    for (const rendition of renditions) {
      expect(rendition.shots.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([
        [0, 24],
        [24, 24],
        [48, 24]
      ])
      expect(rendition.worst_shots).toHaveLength(3)
      // One picture per worst shot's worst frame, worst first, both sides PNG data: URLs.
      const frames = rendition.worst_shots.map((index) => rendition.shots[index]?.worst_frame)
      expect(rendition.thumbnails.map((picture) => picture.frame)).toEqual([...new Set(frames)])
      for (const picture of rendition.thumbnails) {
        expect(picture.reference).toMatch(/^data:image\/png;base64,/)
        expect(picture.distorted).toMatch(/^data:image\/png;base64,/)
        expect(picture.distorted).not.toBe(picture.reference)
      }
    }
    // The renditions differ in quality, so their shots' scores do too.
    expect(renditions[0]?.shots[0]?.score).not.toBe(renditions[1]?.shots[0]?.score)
  }, 180_000)

  it("prints every shot's score per rendition and each rendition's worst shots under the table", async () => {
    const result = await svc([...ladderArgs(), "-q"])
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.split("\n")
    const title = lines.indexOf("3 shots of the reference, score per rendition:")
    expect(title).toBeGreaterThan(0)
    expect(lines[title + 1]?.split(/\s+/)).toEqual(["shot", "frames", ...labels])
    renditions[0]?.shots.forEach((shot, index) => {
      const cells = lines[title + 2 + index]?.split(/\s+/) ?? []
      expect(cells.slice(0, 2)).toEqual([
        String(index),
        `${shot.first_frame}-${shot.first_frame + shot.frame_count - 1}`
      ])
      expect(cells.slice(2).map(Number)).toEqual(
        renditions.map((rendition) => Number((rendition.shots[index]?.score ?? Number.NaN).toFixed(6)))
      )
    })
    for (const rendition of renditions)
      expect(lines).toContain(`worst shots of ${rendition.label}: ${rendition.worst_shots.join(", ")}`)
  }, 180_000)

  it("shows the shots in the HTML report: bands' data, a table with each rendition's worst marked, the pictures", () => {
    const html = readFileSync(path("ladder.html"), "utf8")
    const data = JSON.parse(
      /<script type="application\/json" id="ladder-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "{}"
    )
    expect(data.shots).toEqual([
      { first: 0, count: 24 },
      { first: 24, count: 24 },
      { first: 48, count: 24 }
    ])
    const table = /<table id="shots">(.*?)<\/table>/s.exec(html)?.[1] ?? ""
    expect(table.match(/<tr data-shot=/g)).toHaveLength(3)
    // Each rendition's worst shot is marked in its column.
    expect(table.match(/class="worst-shot"/g)?.length).toBe(
      renditions.reduce((sum, rendition) => sum + rendition.worst_shots.length, 0)
    )
    for (const rendition of renditions)
      for (const picture of rendition.thumbnails)
        expect(html).toContain(`<figure data-rendition="${rendition.label}" data-frame="${picture.frame}">`)
  })

  it.skipIf(!haveChromium)(
    "draws the shots as bands behind every rendition's series in headless Chromium",
    async () => {
      const dom = await headlessChromium(scratch.dir).dom(path("ladder.html"))
      expect(dom).toContain('data-drawn="true"')
      const bands = [
        ...dom.matchAll(/<rect [^>]*class="shot[^"]*" data-shot="(\d+)" data-first="(\d+)" data-count="(\d+)"/g)
      ]
      expect(bands.map((band) => [band[2], band[3]].map(Number))).toEqual([
        [0, 24],
        [24, 24],
        [48, 24]
      ])
      expect(dom.match(/<polyline points="[^"]+" data-rendition="/g)).toHaveLength(labels.length)
    },
    60_000
  )
})
