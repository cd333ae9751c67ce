/**
 * Property tests of tenant isolation: random tenants (including look-alikes and SQL-looking
 * strings) run random job and node operations against one controller; no operation may return a
 * job of another tenant or change another tenant's row.
 */
import { expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream, TestClock, TestContext } from "effect"
import fc from "fast-check"
import type { Job } from "./model.ts"
import type { JobServiceShape } from "./service.ts"
import { type Backend, type RawRow, rowsOf } from "../../test/support/job-store/backends.ts"
import { describeContract } from "../../test/support/job-store/contract.ts"
import { node, request, result, rootsOf, withController, writer } from "../../test/support/job-store/support.ts"

const TENANTS = ["a", "b", "A", "a ", " a", "' OR '1'='1", "%", "_", "b\u0000", ""] as const
const tenant = fc.constantFrom(...TENANTS)
const index = fc.nat({ max: 12 })

type Op =
  | { readonly kind: "submit" | "list" | "register"; readonly tenant: string }
  | { readonly kind: "get" | "cancel"; readonly tenant: string; readonly job: number }
  | { readonly kind: "heartbeat"; readonly tenant: string; readonly node: number }
  | { readonly kind: "pull"; readonly tenant: string; readonly node: number; readonly max: number }
  | {
      readonly kind: "report"
      readonly tenant: string
      readonly node: number
      readonly job: number
      readonly final: boolean
      readonly fail: boolean
    }
  | { readonly kind: "tick"; readonly millis: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constantFrom("submit" as const, "list" as const, "register" as const), tenant }),
    weight: 4
  },
  { arbitrary: fc.record({ kind: fc.constantFrom("get" as const, "cancel" as const), tenant, job: index }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("heartbeat" as const), tenant, node: index }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant("pull" as const), tenant, node: index, max: fc.nat({ max: 3 }) }),
    weight: 3
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("report" as const),
      tenant,
      node: index,
      job: index,
      final: fc.boolean(),
      fail: fc.boolean()
    }),
    weight: 4
  },
  {
    arbitrary: fc.record({ kind: fc.constant("tick" as const), millis: fc.constantFrom(1_000, 15_000, 45_000) }),
    weight: 1
  }
)

/** Checks one operation's answer and its effect on the rows of every other tenant. */
const check = (
  jobs: JobServiceShape,
  backend: Backend,
  state: { readonly jobIds: Array<string>; readonly nodeIds: Array<string> },
  step: Op
) =>
  Effect.gen(function* () {
    if (step.kind === "tick") {
      yield* TestClock.adjust(step.millis)
      return
    }
    const caller = step.tenant
    const othersRows = Effect.map(rowsOf(backend), (rows) => rows.filter((row) => row.tenant_id !== caller))
    const ownerOf = (jobId: string | undefined) =>
      Effect.map(rowsOf(backend), (rows) => rows.find((row: RawRow) => row.id === jobId)?.tenant_id)
    const jobId = "job" in step ? (state.jobIds[step.job] ?? `unknown-${step.job}`) : undefined
    const nodeId = "node" in step ? (state.nodeIds[step.node] ?? `unknown-${step.node}`) : undefined
    const before = yield* othersRows
    const returned: Array<Job> = []

    switch (step.kind) {
      case "submit": {
        const submitted = yield* Effect.either(jobs.submit(writer(caller), request()))
        if (Either.isRight(submitted)) {
          state.jobIds.push(submitted.right.id)
          returned.push(submitted.right)
        } else expect(caller === "" || caller.includes("\u0000")).toBe(true)
        break
      }
      case "list": {
        const listed = yield* jobs.list(writer(caller), {})
        returned.push(...listed)
        const own = caller === "" ? [] : (yield* rowsOf(backend)).filter((row) => row.tenant_id === caller).reverse()
        expect(listed.map((job) => job.id)).toEqual(own.map((row) => row.id))
        break
      }
      case "register": {
        const registered = yield* Effect.either(jobs.register(node(caller), { name: "n", slots: 1, version: "t" }))
        if (Either.isRight(registered)) state.nodeIds.push(registered.right.nodeId)
        else expect(caller === "" || caller.includes("\u0000")).toBe(true)
        break
      }
      case "get":
      case "cancel": {
        const answer = yield* Effect.either(
          step.kind === "get" ? jobs.get(writer(caller), jobId ?? "") : jobs.cancel(writer(caller), jobId ?? "")
        )
        const owner = yield* ownerOf(jobId)
        if (owner !== undefined && owner !== caller) {
          expect(Either.isLeft(answer) && answer.left.message).toBe("resource belongs to another tenant")
        }
        if (Either.isRight(answer)) returned.push(answer.right)
        else expect(answer.left._tag).not.toBe("JobStoreFailure")
        break
      }
      case "heartbeat":
        yield* jobs.heartbeat(node(caller), nodeId ?? "", [])
        break
      case "pull": {
        const pulled = yield* Effect.either(jobs.pullWork(node(caller), nodeId ?? "", step.max))
        if (Either.isRight(pulled)) {
          returned.push(...pulled.right)
          for (const job of pulled.right) expect(job.scoringRoots).toEqual(rootsOf(caller))
        } else expect(pulled.left._tag).not.toBe("JobStoreFailure")
        break
      }
      case "report": {
        const report = step.fail
          ? { final: step.final, error: "failed", framesDone: 1 }
          : { final: step.final, result: result(50), framesDone: 1 }
        const answer = yield* Effect.either(jobs.reportResult(node(caller), nodeId ?? "", jobId ?? "", report))
        const owner = yield* ownerOf(jobId)
        if (owner !== caller) {
          expect(Either.isLeft(answer) && answer.left.message).toBe(
            `job "${jobId}" is not assigned to node "${nodeId}"`
          )
        }
        if (Either.isRight(answer)) returned.push(answer.right)
        else expect(answer.left._tag).not.toBe("JobStoreFailure")
        break
      }
    }
    for (const job of returned) expect(job.tenantId).toBe(caller)
    expect(yield* othersRows).toEqual(before)
  })

describeContract("tenant isolation (property)", ({ name, fresh }) => {
  // PostgreSQL runs are slower (a database per run): fewer of them, same properties.
  const runs = (sqlite: number) => (name === "sqlite" ? sqlite : Math.ceil(sqlite / 4))
  it("no operation returns or changes another tenant's job", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (steps) => {
        const backend = await fresh()
        const program = withController(backend, (jobs) =>
          Effect.gen(function* () {
            const state = { jobIds: [] as string[], nodeIds: [] as string[] }
            yield* Effect.forEach(steps, (step) => check(jobs, backend, state, step))
          })
        )
        await Effect.runPromise(Effect.provide(program, TestContext.TestContext))
      }),
      { numRuns: runs(60) }
    )
  }, 120_000)

  it("a stream follower sees only its own tenant's changes", async () => {
    const named = tenant.filter((t) => t !== "" && !t.includes("\u0000"))
    await fc.assert(
      fc.asyncProperty(named, fc.array(named, { minLength: 1, maxLength: 15 }), async (me, submitters) => {
        const backend = await fresh()
        const program = withController(backend, (jobs) =>
          Effect.scoped(
            Effect.gen(function* () {
              const start = yield* jobs.submit(writer(me), request("start"))
              const pull = yield* Stream.toPull(Stream.rechunk(jobs.stream(writer(me), { follow: true }), 1))
              const next = Effect.map(pull, (chunk) => Chunk.toReadonlyArray(chunk))
              // The listing arrived, so the follower is subscribed before anything else is submitted.
              expect((yield* next).map((job) => job.id)).toEqual([start.id])
              yield* Effect.forEach(submitters, (t) => jobs.submit(writer(t), request()))
              const sentinel = yield* jobs.submit(writer(me), request("sentinel"))
              const seen: Array<Job> = []
              while (seen.at(-1)?.id !== sentinel.id) seen.push(...(yield* next))
              // A change committed around the subscription may come twice (the start job).
              const changes = seen.filter((job) => job.id !== start.id)
              expect(changes.map((job) => job.tenantId)).toEqual(
                Array.from({ length: submitters.filter((t) => t === me).length + 1 }, () => me)
              )
              expect(seen.every((job) => job.tenantId === me)).toBe(true)
            })
          )
        )
        await Effect.runPromise(program)
      }),
      { numRuns: runs(25) }
    )
  }, 120_000)
})
