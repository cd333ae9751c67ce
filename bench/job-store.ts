/**
 * The job store under load: jobs per second from SubmitJob to the final ReportResult, through
 * one SQLite controller, one PostgreSQL replica and two PostgreSQL replicas on one database,
 * with 4, 16 and 64 simulated nodes draining a full queue or running while jobs are submitted
 * (mixed), and the latency of PullWork calls that claimed jobs (p50/p99). The nodes are gRPC
 * clients of the bench that report a fixed result at once, so the figures are the store's and
 * the gateway's, not the scorer's. PostgreSQL is Debian's 15, started here (fsync on). The last
 * case is the mixed run with nodes polling every few milliseconds instead of long-polling, as
 * nodes did before issue 35. The stores' runs alternate, and each PostgreSQL figure comes with
 * its ratio to SQLite's (and two replicas' to one's) over runs made back to back, so a shared,
 * loaded host still gives comparable figures where its absolute ones are not.
 */
import * as grpc from "@grpc/grpc-js"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { postgresAvailable, startPostgres } from "../local/postgres-server.ts"
import { serviceDefinition, type ServiceName } from "../modules/transport/grpc/proto.ts"
import { fixturesDir, type RunningService, startService } from "../local/executables.ts"

/** Jobs per run. */
const JOBS = 1_000
const SUBMITTERS = 4
/** Jobs a node claims per PullWork (and reports per ReportResults). */
const PULL = 4
/** Node counts of the runs (SVC_BENCH_NODES=16 for one). */
const NODE_COUNTS = (process.env["SVC_BENCH_NODES"] ?? "4,16,64").split(",").map(Number)
/** Runs of each case; the medians are printed (SVC_BENCH_RUNS). */
const RUNS = Math.max(1, Number(process.env["SVC_BENCH_RUNS"] ?? "1"))
/** PullWork's long-poll wait in the bench (short: nodes still waiting at the end return soon). */
const WAIT_MS = 1_000
/** How often a polling node (no long-poll, as before issue 35) asks again after an empty answer. */
const POLL_MS = 5

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

/** How the simulated nodes run: drain a full queue, or run while the jobs are being submitted. */
type Mode = "drain" | "mixed"

interface Figures {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  /** PullWork calls that came back empty. */
  readonly empty: number
  readonly failed: number
}

/**
 * JOBS jobs through the replicas (submissions round-robin) run by `nodes` simulated nodes, each
 * on a replica in turn: PullWork of PULL jobs (long-polling `WAIT_MS`, or polling every POLL_MS),
 * then one ReportResults with every result. `drain`: all jobs are queued before the nodes start.
 */
const run = async (
  replicas: ReadonlyArray<RunningService>,
  nodes: number,
  mode: Mode,
  longPoll = true
): Promise<Figures> => {
  const callers = replicas.map((replica) => caller(replica.grpc ?? ""))
  const via = (i: number) => callers[i % callers.length] ?? callers[0]
  const claims: Array<number> = []
  let finished = 0
  let failed = 0
  let empty = 0
  let submitted = 0
  let done = 0
  const submit = () =>
    Promise.all(
      Array.from({ length: SUBMITTERS }, async () => {
        while (submitted < JOBS) {
          const i = submitted++
          await via(i)?.call("svc.v1.Jobs", "SubmitJob", { request: jobRequest })
        }
      })
    )
  const registered = await Promise.all(
    Array.from({ length: nodes }, async (_, n) => {
      const replica = via(n)
      if (replica === undefined) throw new Error("no replica")
      const { node_id } = await replica.call<{ node_id: string }>("svc.v1.Nodes", "RegisterNode", {
        name: `bench-${n}`,
        slots: PULL,
        version: "bench"
      })
      return { replica, node_id }
    })
  )
  // Sessions stay live however long a run takes (TTL 30 s).
  const heartbeats = setInterval(() => {
    for (const { replica, node_id } of registered)
      replica.call("svc.v1.Nodes", "Heartbeat", { node_id, running_job_ids: [] }).catch(() => undefined)
  }, 5_000)
  if (mode === "drain") await submit()
  const started = performance.now()
  const work = registered.map(async ({ replica, node_id }) => {
    while (finished < JOBS) {
      const before = performance.now()
      const { jobs } = await replica.call<{ jobs: ReadonlyArray<{ id: string }> }>("svc.v1.Nodes", "PullWork", {
        node_id,
        max_jobs: PULL,
        wait_ms: longPoll ? WAIT_MS : 0
      })
      if (jobs.length === 0) {
        empty++
        if (!longPoll) await Bun.sleep(POLL_MS)
        continue
      }
      claims.push(performance.now() - before)
      const { outcomes } = await replica.call<{ outcomes: ReadonlyArray<{ code: number }> }>(
        "svc.v1.Nodes",
        "ReportResults",
        {
          node_id,
          reports: jobs.map((job) => ({
            job_id: job.id,
            final: true,
            result: fixedResult,
            error: "",
            frames_done: 1
          }))
        }
      )
      failed += outcomes.filter((outcome) => outcome.code !== 0).length
      finished += jobs.length
      if (finished >= JOBS && done === 0) done = performance.now()
    }
  })
  await Promise.all([...(mode === "mixed" ? [submit()] : []), ...work])
  clearInterval(heartbeats)
  const elapsed = ((done || performance.now()) - started) / 1000
  for (const one of callers) one.close()
  const sorted = [...claims].sort((a, b) => a - b)
  return { perSecond: JOBS / elapsed, p50: percentile(sorted, 50), p99: percentile(sorted, 99), empty, failed }
}

const line = (label: string, figures: Figures, ratios: string) =>
  console.log(
    `  ${label.padEnd(44)} ${figures.perSecond.toFixed(1).padStart(7)} jobs/s   claim p50 ${figures.p50.toFixed(
      2
    )} ms, p99 ${figures.p99.toFixed(2)} ms, ${figures.empty} empty PullWork, ${figures.failed} failed${
      ratios === "" ? "" : `; ${ratios}`
    }`
  )

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

/** The medians of runs of one case. */
const medianOf = (runs: ReadonlyArray<Figures>): Figures => ({
  perSecond: median(runs.map((one) => one.perSecond)),
  p50: median(runs.map((one) => one.p50)),
  p99: median(runs.map((one) => one.p99)),
  empty: median(runs.map((one) => one.empty)),
  failed: runs.reduce((sum, one) => sum + one.failed, 0)
})

/** The median over run pairs of a's throughput over b's (run i of each was made back to back). */
const pairedRatio = (a: ReadonlyArray<Figures>, b: ReadonlyArray<Figures>) =>
  median(a.map((one, i) => one.perSecond / (b[i]?.perSecond ?? Number.NaN)))

interface Store {
  readonly label: string
  readonly replicas: ReadonlyArray<RunningService>
}

/**
 * Every case on every store: drain and mixed at each node count, and mixed at 64 nodes polling.
 * The stores' runs are interleaved (run i of each store back to back), so a host whose load
 * drifts weighs on every store alike; each store's medians are printed with its throughput over
 * the first store's (SQLite) and, for two replicas, over one replica: medians of the paired runs.
 */
const runAll = async (stores: ReadonlyArray<Store>) => {
  const cases = [
    ...NODE_COUNTS.flatMap((nodes) =>
      (["drain", "mixed"] as const).map((mode) => ({ nodes, mode, longPoll: true, label: mode as string }))
    ),
    ...(NODE_COUNTS.includes(64)
      ? [{ nodes: 64, mode: "mixed" as const, longPoll: false, label: `mixed, polling ${POLL_MS} ms` }]
      : [])
  ]
  for (const one of cases) {
    const runs = stores.map((): Array<Figures> => [])
    for (let i = 0; i < RUNS; i++)
      for (const [k, store] of stores.entries())
        runs[k]?.push(await run(store.replicas, one.nodes, one.mode, one.longPoll))
    for (const [k, store] of stores.entries()) {
      const own = runs[k] ?? []
      const ratios = [
        ...(k > 0 ? [`${pairedRatio(own, runs[0] ?? []).toFixed(2)}× ${stores[0]?.label}`] : []),
        ...(k > 1 ? [`${pairedRatio(own, runs[1] ?? []).toFixed(2)}× ${stores[1]?.label}`] : [])
      ]
      line(`${store.label}, ${one.nodes} nodes, ${one.label}:`, medianOf(own), ratios.join(", "))
    }
  }
}

/** Lines of the controllers' logs and the PostgreSQL log that would mean a transaction did not hold. */
const transactionTrouble = (texts: ReadonlyArray<string>) =>
  texts.join("\n").match(/already a transaction in progress|UNSAFE_TRANSACTION|no transaction in progress/g)?.length ??
  0

export const benchJobStores = async (): Promise<void> => {
  console.log(
    `job store (${RUNS === 1 ? "one run" : `medians of ${RUNS} runs`}): ${JOBS} jobs submit → finished (${SUBMITTERS} submitters), nodes pulling ${PULL} (long-poll ${WAIT_MS} ms) and reporting them in one ReportResults; drain: queued first; mixed: submitted meanwhile; claims = PullWork calls that got jobs`
  )
  const scratch = mkdtempSync(join(tmpdir(), "svc-bench-store-"))
  const common = { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: fixturesDir, SVC_LOG_LEVEL: "info" }
  const start = (env: Record<string, string>) =>
    startService("svc-controller", { env: { ...common, ...env }, listeners: ["http", "grpc"] })
  const started: Array<RunningService> = []
  const pg = postgresAvailable() ? await startPostgres({ durable: true }) : undefined
  try {
    const sqlite = await start({ SVC_STORE_PATH: join(scratch, "jobs.sqlite") })
    started.push(sqlite)
    const stores: Array<Store> = [{ label: "SQLite", replicas: [sqlite] }]
    if (pg === undefined) console.log("  PostgreSQL: skipped (PostgreSQL 15 binaries not installed)")
    else
      for (const count of [1, 2]) {
        const database = `bench_${count}`
        await pg.createDatabase(database)
        const env = { SVC_STORE_URL: pg.url(database), SVC_STORE_PASSWORD_FILE: pg.passwordFile }
        const replicas = await Promise.all(Array.from({ length: count }, () => start(env)))
        started.push(...replicas)
        stores.push({ label: `PostgreSQL ${count} replica${count === 1 ? "" : "s"}`, replicas })
      }
    await runAll(stores)
  } finally {
    for (const service of started) await service.stop()
    if (pg !== undefined) {
      const logs = started.map((service) => JSON.stringify(service.logs))
      console.log(
        `  ${transactionTrouble([...logs, readFileSync(join(pg.dir, "log"), "utf8")])} transaction warnings or UNSAFE_TRANSACTION in the controllers' and PostgreSQL's logs`
      )
      pg.stop()
    }
    rmSync(scratch, { recursive: true, force: true })
  }
}
