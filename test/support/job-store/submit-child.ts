/**
 * Child process of the kill -9 durability test: submits jobs forever on the store file given as
 * argument and writes each job id to stdout only after `submit` returned (the acknowledgement).
 */
import { Effect } from "effect"
import { writeSync } from "node:fs"
import { request, withController, writer } from "./support.ts"

const path = process.argv[2]
if (path === undefined) throw new Error("usage: submit-child.ts <store file>")

const program = withController(path, (jobs) =>
  Effect.forever(
    Effect.flatMap(jobs.submit(writer("durable"), request()), (job) =>
      // A synchronous write: the parent sees the id as soon as the job is acknowledged.
      Effect.sync(() => writeSync(1, `${job.id}\n`))
    )
  )
)

await Effect.runPromise(program)
