/**
 * `npm run build`: compiles the native scorer library, then every executable with
 * `bun build --compile` into dist/. Each executable embeds its protos, the native library and
 * static assets, so it runs from any directory with nothing beside it.
 */
import { $ } from "bun"
import { mkdirSync } from "node:fs"
import { availableParallelism } from "node:os"
import { testerReportBuildStep } from "../modules/report/build-step.ts"
import { restoreFixtures } from "./fixtures.ts"

export const executables = [
  "svc-server",
  "svc-controller",
  "svc-node",
  "svc-tester-report",
  "svc",
  "svc-mcp",
  "svc-operator"
] as const

const root = new URL("..", import.meta.url).pathname
process.chdir(root)

const commit = (await $`git rev-parse --short=12 HEAD`.nothrow().quiet()).stdout.toString().trim() || "unknown"

// Targets: "native" and executable names; none means everything.
const targets = process.argv.slice(2)
const wanted = (target: string) => targets.length === 0 || targets.includes(target)

if (wanted("native")) {
  await $`bash scripts/build-native.sh`
  // The TypeScript side's static copy of the library's feature list (modules/scorer/native-features.ts).
  // Imported only now: it loads the library, which a fresh clone has just built.
  const { writeNativeFeatures } = await import("./native-features.ts")
  if (await writeNativeFeatures()) console.log("wrote modules/scorer/native-features.ts (commit it)")
  // The OpenAPI request schemas take their feature enum from that list. Imported after it was written.
  const { writeOpenApi } = await import("./openapi.ts")
  if (writeOpenApi()) console.log("wrote schemas/openapi.json (commit it)")
}

// svc-tester-report embeds scalar reference values recorded with the library just built on the
// repository's fixtures (restored from test/fixtures/yuv.tar.zst) and the build's image metadata
// (--define SVC_BUILD_IMAGE).
if (wanted("svc-tester-report")) await restoreFixtures()
const testerReportArgs = wanted("svc-tester-report") ? await testerReportBuildStep() : []

mkdirSync("dist", { recursive: true })
const compile = async (name: (typeof executables)[number]) => {
  const started = performance.now()
  await $`${process.execPath} build --compile --minify-syntax --minify-whitespace --sourcemap=none ${`apps/${name}/main.ts`} --outfile ${`dist/${name}`} --define ${`SVC_BUILD_COMMIT=${JSON.stringify(commit)}`} ${name === "svc-tester-report" ? testerReportArgs : []}`.quiet()
  console.log(`built dist/${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
// One compile per core at a time: each spends much of its time on one thread or writing its file.
const queue = executables.filter(wanted)
await Promise.all(
  Array.from({ length: Math.min(availableParallelism(), queue.length) }, async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) await compile(name)
  })
)
