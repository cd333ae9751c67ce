/**
 * Headless Chromium for the HTML report tests: a fresh profile per run, no background traffic,
 * the page's DOM after its scripts ran, and screenshots kept in test/artifacts/ (gitignored) for
 * people to look at.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { repoRoot, runCommand } from "../../local/executables.ts"

export const chromium = "/usr/bin/chromium"
export const haveChromium = existsSync(chromium)
export const artifacts = join(repoRoot, "test", "artifacts")

/** A Chromium runner whose profiles live under `scratch`. */
export const headlessChromium = (scratch: string) => {
  let profiles = 0
  // HOME in the scratch folder too: without one Chromium keeps its crash-report settings in
  // TMPDIR/.config, which outlived the test run.
  const run = (args: ReadonlyArray<string>) =>
    runCommand(
      [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        `--user-data-dir=${join(scratch, `profile-${profiles++}`)}`,
        ...args
      ],
      { env: { HOME: scratch } }
    )
  /** The DOM of `file` (with `hash`) after its scripts ran, at a window `width` wide. */
  const dom = async (file: string, hash = "", width = 1000) => {
    const result = await run([`--window-size=${width},1200`, "--dump-dom", `file://${file}${hash}`])
    if (result.code !== 0) throw new Error(`chromium failed: ${result.stderr}`)
    return result.stdout
  }
  return { run, dom }
}

/** The scale a chart states on its <svg> (data-low, data-high, data-plot): y back to a value. */
export const chartScale = (svgTag: string) => {
  const attribute = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(svgTag)?.[1]
  const low = Number(attribute("data-low"))
  const high = Number(attribute("data-high"))
  const [, top = 0, , height = 1] = String(attribute("data-plot")).split(",").map(Number)
  return (y: number) => low + (high - low) * (1 - (y - top) / height)
}
