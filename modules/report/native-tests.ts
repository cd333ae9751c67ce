// Runs the native C tests that the executable embeds (built by scripts/build-native.sh). They
// are linked against libsvc_scorer.so with rpath $ORIGIN, so each run copies the programs and
// the embedded library into one fresh directory under TMPDIR, and removes it afterwards.
// Imported only by run.ts: vitest cannot load these extensionless `type: "file"` imports.
import { Effect } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import feedTestPath from "../scorer/native/build/feed_test" with { type: "file" }
import libraryPath from "../scorer/native/build/libsvc_scorer.so" with { type: "file" }
import readerTestPath from "../scorer/native/build/reader_test" with { type: "file" }
import scorerTestPath from "../scorer/native/build/scorer_test" with { type: "file" }
import simdTestPath from "../scorer/native/build/simd_test" with { type: "file" }
import type { ProgramRun } from "./unit-tests.ts"
import { builtinModelFiles } from "../scorer/index.ts"

/** Each test program and the arguments it takes given the shared directory of models/ and fixtures/. */
const programs = [
  { program: "scorer_test", path: scorerTestPath, args: (shared: string) => [shared] },
  { program: "reader_test", path: readerTestPath, args: (): ReadonlyArray<string> => [] },
  // Streams fed from descriptors (files and pipes) by the library's reading thread.
  { program: "feed_test", path: feedTestPath, args: (shared: string) => [shared] },
  // SIMD paths against scalar on random frames; a path this CPU lacks prints a SKIP line.
  { program: "simd_test", path: simdTestPath, args: (): ReadonlyArray<string> => [] }
] as const

/** A hung test must not hang the report. */
const timeoutMs = 300_000

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const runProgram = (program: string, argv: ReadonlyArray<string>, cwd: string): Effect.Effect<ProgramRun> =>
  Effect.tryPromise(async () => {
    const child = Bun.spawn([...argv], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: timeoutMs })
    const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
    await child.exited
    const run: ProgramRun = { program, stdout, stderr, exitCode: child.exitCode }
    return child.signalCode === null ? run : { ...run, problem: `killed by ${child.signalCode}` }
  }).pipe(
    Effect.catchAll((failure) =>
      Effect.succeed<ProgramRun>({
        program,
        stdout: "",
        stderr: "",
        exitCode: null,
        problem: `cannot run: ${errorText(failure.error)}`
      })
    )
  )

/**
 * Runs every embedded test program. The ABI test reads models/ and fixtures/ under the
 * directory it is given: a directory of two symlinks stands for it, so the two can live apart.
 * Without a model directory, models/ holds copies of the built-in models.
 */
export const runNativeTests = (dirs: {
  readonly modelDir: string | undefined
  readonly fixturesDir: string
}): Effect.Effect<ReadonlyArray<ProgramRun>> =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), "svc-unit-tests-"))),
    (dir) =>
      Effect.gen(function* () {
        const prepared = yield* Effect.try(() => {
          // Read and write, not copyFile: the embedded files live in Bun's virtual file system.
          writeFileSync(join(dir, "libsvc_scorer.so"), readFileSync(libraryPath))
          for (const entry of programs) {
            writeFileSync(join(dir, entry.program), readFileSync(entry.path))
            chmodSync(join(dir, entry.program), 0o755)
          }
          const shared = join(dir, "shared")
          mkdirSync(shared)
          if (dirs.modelDir !== undefined) symlinkSync(resolve(dirs.modelDir), join(shared, "models"))
          else {
            mkdirSync(join(shared, "models"))
            for (const [name, path] of builtinModelFiles)
              writeFileSync(join(shared, "models", `${name}.json`), readFileSync(path))
          }
          symlinkSync(resolve(dirs.fixturesDir), join(shared, "fixtures"))
          return shared
        }).pipe(Effect.either)
        if (prepared._tag === "Left") {
          const problem = `cannot unpack the test programs into ${dir}: ${errorText(prepared.left.error)}`
          return programs.map(
            (entry): ProgramRun => ({ program: entry.program, stdout: "", stderr: "", exitCode: null, problem })
          )
        }
        const shared = prepared.right
        return yield* Effect.forEach(programs, (entry) =>
          runProgram(entry.program, [join(dir, entry.program), ...entry.args(shared)], dir)
        )
      }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
