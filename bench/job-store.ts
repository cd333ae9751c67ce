/**
 * The job store under load: jobs per second from SubmitJob to the final ReportResult, through
 * one SQLite controller, one PostgreSQL replica and two PostgreSQL replicas on one database, with
 * the latency of PullWork calls that claimed jobs (p50/p99). The nodes are gRPC clients of the
 * bench that report a fixed result at once, so the figures are the store's and the gateway's,
 * not the scorer's (a trivial clip). PostgreSQL is Debian's 15, started here (fsync on).
 */
import * as grpc from "@grpc/grpc-js"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { postgresAvailable, startPostgres } from "../modules/jobs/testing/postgres-server.ts"
import { serviceDefinition, type ServiceName } from "../modules/transport/grpc/proto.ts"
import { fixturesDir, type RunningService, startService } from "../test/support/executables.ts"

const JOBS = 600
const NODES = 4
const SUBMITTERS = 4
const PULL = 4

const jobRequest = {
  reference: join(fixturesDir, "v01_testsrc2_420_8_x264.ref.yuv"),
  distorted: join(fixturesDir, "v01_testsrc2_420_8_x264.dis.yuv"),
  options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8, frame_cnt: 1 }
}

const fixedResult = {
  score: 90,
  features: { vmaf: 90 },
  provenance: {
    library: { abi_minor: 0, abi_patch: 0, active_backend: "scalar", n_extractors: 1, version: "bench" },
    model: "vmaf_v0.6.1",
    model_sha256: "0".repeat(64),
    backend_used: "scalar",
    feature_backends: [],
    precision: "lossless"
  },
  frames: [{ frame: 0, metrics: { vmaf: 90 } }],
  frame_count: 1,
  pooled: { min: { vmaf: 90 }, max: { vmaf: 90 }, harmonic_mean: { vmaf: 90 } }
}

/** A unary caller of one controller (auth disabled: tenant `dev`, admin and node roles). */
const caller = (address: string) => {
  const client = new grpc.Client(address, grpc.credentials.createInsecure())
  const call = <T>(service: ServiceName, method: string, request: object) =>
    new Promise<T>((resolve, reject) => {
      const definition = serviceDefinition(service)[method]
      if (definition === undefined) throw new Error(`no ${service}/${method}`)
      client.makeUnaryRequest<object, T>(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + 30_000 },
        (error, response) => (error || response === undefined ? reject(error) : resolve(response))
      )
    })
  return { call, close: () => client.close() }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

/** JOBS jobs submitted round-robin through the replicas and run by NODES bench nodes. */
const run = async (replicas: ReadonlyArray<RunningService>) => {
  const callers = replicas.map((replica) => caller(replica.grpc ?? ""))
  const via = (i: number) => callers[i % callers.length] ?? callers[0]
  const claims: Array<number> = []
  let finished = 0
  let submitted = 0
  const started = performance.now()
  const submitters = Array.from({ length: SUBMITTERS }, async () => {
    while (submitted < JOBS) {
      const i = submitted++
      await via(i)?.call("svc.v1.Jobs", "SubmitJob", { request: jobRequest })
    }
  })
  const nodes = Array.from({ length: NODES }, async (_, n) => {
    const replica = via(n)
    if (replica === undefined) return
    const { node_id } = await replica.call<{ node_id: string }>("svc.v1.Nodes", "RegisterNode", {
      name: `bench-${n}`,
      slots: PULL,
      version: "bench"
    })
    while (finished < JOBS) {
      const before = performance.now()
      const { jobs } = await replica.call<{ jobs: ReadonlyArray<{ id: string }> }>("svc.v1.Nodes", "PullWork", {
        node_id,
        max_jobs: PULL
      })
      if (jobs.length === 0) {
        await Bun.sleep(5)
        continue
      }
      claims.push(performance.now() - before)
      await Promise.all(
        jobs.map((job) =>
          replica.call("svc.v1.Nodes", "ReportResult", {
            node_id,
            job_id: job.id,
            final: true,
            result: fixedResult,
            error: "",
            frames_done: 1
          })
        )
      )
      finished += jobs.length
    }
  })
  await Promise.all([...submitters, ...nodes])
  const elapsed = (performance.now() - started) / 1000
  for (const one of callers) one.close()
  const sorted = [...claims].sort((a, b) => a - b)
  return { perSecond: JOBS / elapsed, p50: percentile(sorted, 50), p99: percentile(sorted, 99) }
}

const line = (label: string, figures: Awaited<ReturnType<typeof run>>) =>
  console.log(
    `  ${label.padEnd(28)} ${figures.perSecond.toFixed(1).padStart(7)} jobs/s   claim p50 ${figures.p50.toFixed(
      2
    )} ms, p99 ${figures.p99.toFixed(2)} ms`
  )

export const benchJobStores = async (): Promise<void> => {
  console.log(
    `job store: ${JOBS} jobs submit → finished (${SUBMITTERS} submitters, ${NODES} nodes pulling ${PULL}), claims = PullWork calls that got jobs`
  )
  const scratch = mkdtempSync(join(tmpdir(), "svc-bench-store-"))
  const common = { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: fixturesDir, SVC_LOG_LEVEL: "info" }
  const start = (env: Record<string, string>) =>
    startService("svc-controller", { env: { ...common, ...env }, listeners: ["http", "grpc"] })
  const sqlite = await start({ SVC_STORE_PATH: join(scratch, "jobs.sqlite") })
  try {
    line("SQLite, 1 controller:", await run([sqlite]))
  } finally {
    await sqlite.stop()
  }
  if (!postgresAvailable()) {
    console.log("  PostgreSQL: skipped (PostgreSQL 15 binaries not installed)")
    rmSync(scratch, { recursive: true, force: true })
    return
  }
  const pg = await startPostgres({ durable: true })
  try {
    for (const count of [1, 2]) {
      const database = `bench_${count}`
      await pg.createDatabase(database)
      const env = { SVC_STORE_URL: pg.url(database), SVC_STORE_PASSWORD_FILE: pg.passwordFile }
      const replicas = await Promise.all(Array.from({ length: count }, () => start(env)))
      try {
        line(`PostgreSQL, ${count} replica${count === 1 ? "" : "s"}:`, await run(replicas))
      } finally {
        for (const replica of replicas) await replica.stop()
      }
    }
  } finally {
    pg.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}
