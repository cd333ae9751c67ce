/**
 * The job store under load: jobs per second from SubmitJob to the final ReportResult, through
 * one SQLite controller, one PostgreSQL replica and two PostgreSQL replicas on one database,
 * with 4, 16 and 64 simulated nodes draining a full queue or running while jobs are submitted
 * (mixed), and the latency of PullWork calls that claimed jobs (p50/p99). The nodes are gRPC
 * clients of the bench that report a fixed result at once, so the figures are the store's and
 * the gateway's, not the scorer's. PostgreSQL is Debian's 15, started here (fsync on). The last
 * case is the mixed run with nodes polling every few milliseconds instead of long-polling, as
 * nodes did before issue 35, printed beside the long-poll figure. The stores' runs alternate, and
 * each PostgreSQL figure comes with its ratio to SQLite's (and two replicas' to one's) over runs
 * made back to back, so a shared, loaded host still gives comparable figures where its absolute
 * ones are not. A simulated node whose session lapsed (the controller answers NOT_FOUND) registers
 * again, as svc-node does; the jobs it held are re-queued by the controller's sweep.
 */
import * as grpc from "@grpc/grpc-js"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import postgres from "postgres"
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
/** The stores to run, of sqlite, pg1 and pg2 (SVC_BENCH_STORES=pg1,pg2 for PostgreSQL only). */
const STORES = (process.env["SVC_BENCH_STORES"] ?? "sqlite,pg1,pg2").split(",")
/** The cases to run, of drain, mixed and polling (64 nodes, SVC_BENCH_MODES=mixed,polling for the long-poll comparison). */
const MODES = (process.env["SVC_BENCH_MODES"] ?? "drain,mixed,polling").split(",")
/** Runs of each case; the medians are printed (SVC_BENCH_RUNS). */
const RUNS = Math.max(1, Number(process.env["SVC_BENCH_RUNS"] ?? "1"))
/** PullWork's long-poll wait in the bench (short: nodes still waiting at the end return soon). */
const WAIT_MS = 1_000
/** How often a polling node (no long-poll, as before issue 35) asks again after an empty answer. */
const POLL_MS = 5
/** gRPC NOT_FOUND: the node's session lapsed (or is unknown); svc-node registers again. */
const NOT_FOUND = 5
/**
 * The controllers re-queue a lapsed session's jobs this soon after it lapsed (default 60 s), so a
 * run where a session lapsed still ends in seconds.
 */
const REQUEUE_GRACE_MS = 1_000

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

/** Milliseconds per clock tick of /proc/<pid>/stat's times (USER_HZ is 100 on Linux). */
const TICK_MS = 10

/** user + system CPU ms of a process from /proc/<pid>/stat (0 once it is gone); `reaped` adds its waited-for children's. */
const cpuOfProcess = (pid: number, reaped = false): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // After the command name in parentheses: field 3 (state) onward; utime is field 14.
    const fields = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number)
    const own = (fields[11] ?? 0) + (fields[12] ?? 0)
    return (own + (reaped ? (fields[13] ?? 0) + (fields[14] ?? 0) : 0)) * TICK_MS
  } catch {
    return 0
  }
}

/** The parent pid of a process (field 4 of its stat), or -1. */
const parentOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return -1
  }
}

/**
 * CPU ms of a PostgreSQL server: the postmaster with the children it reaped (backends that ended)
 * and every live child (backends, WAL writer, checkpointer, ...).
 */
const cpuOfServer = (postmaster: number): number =>
  cpuOfProcess(postmaster, true) +
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name) && parentOf(Number(name)) === postmaster)
    .reduce((sum, name) => sum + cpuOfProcess(Number(name)), 0)

/** The processes whose CPU a run accounts for, and the store's database (its function calls are counted). */
interface Accounted {
  readonly controllers: ReadonlyArray<number>
  readonly postmaster: number | undefined
  readonly database?: postgres.Sql
}

/** Functions the store's functions call themselves (not a call of the controller). */
const NESTED = new Set(["svc_enter", "svc_segments_json", "svc_jobs_notify_changed", "svc_segments_notify_pending"])

/** Calls so far of each store function (track_functions): the statements the controllers sent. */
const callsNow = async (database: postgres.Sql | undefined): Promise<ReadonlyMap<string, number>> => {
  if (database === undefined) return new Map()
  const rows = await database<Array<{ funcname: string; calls: string }>>`
    SELECT funcname, sum(calls)::text AS calls FROM pg_stat_user_functions GROUP BY funcname`
  return new Map(rows.filter((row) => !NESTED.has(row.funcname)).map((row) => [row.funcname, Number(row.calls)]))
}

/** PostgreSQL publishes a backend's function counts once it is idle, at most once a second. */
const STATS_DELAY_MS = 1_200

/** CPU ms so far of the controllers, the database server and this process (the simulated clients). */
const cpuNow = (accounted: Accounted) => {
  const own = process.cpuUsage()
  return {
    controllers: accounted.controllers.reduce((sum, pid) => sum + cpuOfProcess(pid), 0),
    database: accounted.postmaster === undefined ? 0 : cpuOfServer(accounted.postmaster),
    clients: (own.user + own.system) / 1000
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

/** How the simulated nodes run: drain a full queue, or run while the jobs are being submitted. */
type Mode = "drain" | "mixed"

/** CPU milliseconds per job of each part: the controllers, PostgreSQL's processes, the bench's simulated clients. */
interface CpuPerJob {
  readonly controllers: number
  readonly database: number
  readonly clients: number
}

interface Figures {
  readonly perSecond: number
  readonly cpu: CpuPerJob
  /** Calls per job of each store function the controllers called (PostgreSQL), the most called first. */
  readonly calls: ReadonlyArray<readonly [string, number]>
  readonly p50: number
  readonly p99: number
  /** PullWork calls that came back empty. */
  readonly empty: number
  readonly failed: number
  /** Registrations again after a session lapsed. */
  readonly reregistered: number
}

/**
 * JOBS jobs through the replicas (submissions round-robin) run by `nodes` simulated nodes, each
 * on a replica in turn: PullWork of PULL jobs (long-polling `WAIT_MS`, or polling every POLL_MS),
 * then one ReportResults with every result. `drain`: all jobs are queued before the nodes start.
 */
const run = async ({ replicas, accounted }: Store, nodes: number, mode: Mode, longPoll = true): Promise<Figures> => {
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
  /** A node's current session; `register` makes a new one (at the start, and after a lapse). */
  interface SimulatedNode {
    readonly replica: NonNullable<ReturnType<typeof via>>
    readonly name: string
    nodeId: string
  }
  const register = async (simulated: Omit<SimulatedNode, "nodeId"> & { nodeId?: string }) => {
    const { node_id } = await simulated.replica.call<{ node_id: string }>("svc.v1.Nodes", "RegisterNode", {
      name: simulated.name,
      slots: PULL,
      version: "bench"
    })
    simulated.nodeId = node_id
  }
  const simulatedNodes = await Promise.all(
    Array.from({ length: nodes }, async (_, n): Promise<SimulatedNode> => {
      const replica = via(n)
      if (replica === undefined) throw new Error("no replica")
      const simulated = { replica, name: `bench-${n}`, nodeId: "" }
      await register(simulated)
      return simulated
    })
  )
  let reregistered = 0
  /** Runs a node's call; a lapsed session (NOT_FOUND) registers again and answers undefined. */
  const withSession = async <T>(simulated: SimulatedNode, call: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await call()
    } catch (error) {
      if ((error as { code?: number }).code !== NOT_FOUND) throw error
      reregistered++
      await register(simulated)
      return undefined
    }
  }
  // Sessions stay live however long a run takes (TTL 30 s).
  const heartbeats = setInterval(() => {
    for (const { replica, nodeId } of simulatedNodes)
      replica.call("svc.v1.Nodes", "Heartbeat", { node_id: nodeId, running_job_ids: [] }).catch(() => undefined)
  }, 5_000)
  if (mode === "drain") await submit()
  if (accounted.database !== undefined) await Bun.sleep(STATS_DELAY_MS)
  const callsBefore = await callsNow(accounted.database)
  const cpuBefore = cpuNow(accounted)
  const started = performance.now()
  const work = simulatedNodes.map(async (simulated) => {
    const { replica } = simulated
    while (finished < JOBS) {
      const before = performance.now()
      const pulled = await withSession(simulated, () =>
        replica.call<{ jobs: ReadonlyArray<{ id: string }> }>("svc.v1.Nodes", "PullWork", {
          node_id: simulated.nodeId,
          max_jobs: PULL,
          wait_ms: longPoll ? WAIT_MS : 0
        })
      )
      if (pulled === undefined) continue
      const { jobs } = pulled
      if (jobs.length === 0) {
        empty++
        if (!longPoll) await Bun.sleep(POLL_MS)
        continue
      }
      claims.push(performance.now() - before)
      const reported = await withSession(simulated, () =>
        replica.call<{ outcomes: ReadonlyArray<{ code: number }> }>("svc.v1.Nodes", "ReportResults", {
          node_id: simulated.nodeId,
          reports: jobs.map((job) => ({
            job_id: job.id,
            final: true,
            result: fixedResult,
            error: "",
            frames_done: 1
          }))
        })
      )
      // Refused reports (a session that lapsed meanwhile) leave their jobs to the re-queue.
      const outcomes = reported?.outcomes ?? []
      if (outcomes.some((outcome) => outcome.code === NOT_FOUND)) {
        reregistered++
        await register(simulated)
      }
      failed += outcomes.filter((outcome) => outcome.code !== 0 && outcome.code !== NOT_FOUND).length
      finished += outcomes.filter((outcome) => outcome.code !== NOT_FOUND).length
      if (finished >= JOBS && done === 0) done = performance.now()
    }
  })
  await Promise.all([...(mode === "mixed" ? [submit()] : []), ...work])
  const cpuAfter = cpuNow(accounted)
  clearInterval(heartbeats)
  if (accounted.database !== undefined) await Bun.sleep(STATS_DELAY_MS)
  const callsAfter = await callsNow(accounted.database)
  const calls = [...callsAfter]
    .map(([name, count]) => [name, (count - (callsBefore.get(name) ?? 0)) / JOBS] as const)
    .filter(([, perJob]) => perJob > 0)
    .sort((a, b) => b[1] - a[1])
  const elapsed = ((done || performance.now()) - started) / 1000
  const cpu = {
    controllers: (cpuAfter.controllers - cpuBefore.controllers) / JOBS,
    database: (cpuAfter.database - cpuBefore.database) / JOBS,
    clients: (cpuAfter.clients - cpuBefore.clients) / JOBS
  }
  for (const one of callers) one.close()
  const sorted = [...claims].sort((a, b) => a - b)
  return {
    perSecond: JOBS / elapsed,
    cpu,
    calls,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    empty,
    failed,
    reregistered
  }
}

const line = (label: string, figures: Figures, ratios: string) =>
  console.log(
    `  ${label.padEnd(44)} ${figures.perSecond.toFixed(1).padStart(7)} jobs/s   claim p50 ${figures.p50.toFixed(
      2
    )} ms, p99 ${figures.p99.toFixed(2)} ms, ${figures.empty} empty PullWork, ${figures.failed} failed${
      figures.reregistered === 0 ? "" : `, ${figures.reregistered} sessions registered again`
    }; CPU ms/job: controllers ${figures.cpu.controllers.toFixed(2)}, PostgreSQL ${figures.cpu.database.toFixed(2)}, clients ${figures.cpu.clients.toFixed(2)}${
      ratios === "" ? "" : `; ${ratios}`
    }${
      figures.calls.length === 0
        ? ""
        : `\n    store function calls per job: ${figures.calls.map(([name, perJob]) => `${name} ${perJob.toFixed(2)}`).join(", ")}`
    }`
  )

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

/** The medians of runs of one case. */
const medianOf = (runs: ReadonlyArray<Figures>): Figures => ({
  perSecond: median(runs.map((one) => one.perSecond)),
  calls: [...new Set(runs.flatMap((one) => one.calls.map(([name]) => name)))]
    .map((name) => [name, median(runs.map((one) => one.calls.find(([called]) => called === name)?.[1] ?? 0))] as const)
    .sort((a, b) => b[1] - a[1]),
  cpu: {
    controllers: median(runs.map((one) => one.cpu.controllers)),
    database: median(runs.map((one) => one.cpu.database)),
    clients: median(runs.map((one) => one.cpu.clients))
  },
  p50: median(runs.map((one) => one.p50)),
  p99: median(runs.map((one) => one.p99)),
  empty: median(runs.map((one) => one.empty)),
  failed: runs.reduce((sum, one) => sum + one.failed, 0),
  reregistered: runs.reduce((sum, one) => sum + one.reregistered, 0)
})

/** The median over run pairs of a's throughput over b's (run i of each was made back to back). */
const pairedRatio = (a: ReadonlyArray<Figures>, b: ReadonlyArray<Figures>) =>
  median(a.map((one, i) => one.perSecond / (b[i]?.perSecond ?? Number.NaN)))

interface Store {
  readonly label: string
  readonly replicas: ReadonlyArray<RunningService>
  readonly accounted: Accounted
}

/** A case: how the nodes run. */
interface Case {
  readonly mode: Mode
  readonly longPoll: boolean
  readonly label: string
}

/**
 * Every case on every store: drain and mixed at each node count, and at 64 nodes mixed with
 * nodes polling beside long-polling (each run of the two back to back, and their throughputs
 * compared per pair). The stores' runs are interleaved (run i of each store back to back), so a
 * host whose load drifts weighs on every store alike; each store's medians are printed with its
 * throughput over the first store's (SQLite) and, for two replicas, over one replica: medians of
 * the paired runs.
 */
const runAll = async (stores: ReadonlyArray<Store>) => {
  const drain: Case = { mode: "drain", longPoll: true, label: "drain" }
  const mixed: Case = { mode: "mixed", longPoll: true, label: "mixed" }
  const polling: Case = { mode: "mixed", longPoll: false, label: `mixed, polling ${POLL_MS} ms` }
  const groups = NODE_COUNTS.flatMap((nodes) => [
    ...(MODES.includes("drain") ? [{ nodes, cases: [drain] }] : []),
    {
      nodes,
      cases: [
        ...(MODES.includes("mixed") ? [mixed] : []),
        ...(MODES.includes("polling") && nodes === 64 ? [polling] : [])
      ]
    }
  ]).filter((group) => group.cases.length > 0)
  for (const { nodes, cases } of groups) {
    // runs[case][store]: run i of every case and store made back to back.
    const runs = cases.map(() => stores.map((): Array<Figures> => []))
    for (let i = 0; i < RUNS; i++)
      for (const [k, store] of stores.entries())
        for (const [c, one] of cases.entries()) runs[c]?.[k]?.push(await run(store, nodes, one.mode, one.longPoll))
    for (const [c, one] of cases.entries())
      for (const [k, store] of stores.entries()) {
        const own = runs[c]?.[k] ?? []
        const first = runs[c]?.[0] ?? []
        const second = runs[c]?.[1] ?? []
        const ratios = [
          ...(k > 0 ? [`${pairedRatio(own, first).toFixed(2)}× ${stores[0]?.label}`] : []),
          ...(k > 1 ? [`${pairedRatio(own, second).toFixed(2)}× ${stores[1]?.label}`] : [])
        ]
        line(`${store.label}, ${nodes} nodes, ${one.label}:`, medianOf(own), ratios.join(", "))
      }
    if (cases.length === 2)
      for (const [k, store] of stores.entries()) {
        const longPolled = medianOf(runs[0]?.[k] ?? [])
        const polled = medianOf(runs[1]?.[k] ?? [])
        console.log(
          `  ${store.label}, ${nodes} nodes mixed, long-poll vs polling ${POLL_MS} ms: ${longPolled.perSecond.toFixed(1)} vs ${polled.perSecond.toFixed(1)} jobs/s (${pairedRatio(runs[0]?.[k] ?? [], runs[1]?.[k] ?? []).toFixed(2)}×), empty PullWork ${longPolled.empty} vs ${polled.empty}, CPU ms/job (controllers + PostgreSQL) ${(longPolled.cpu.controllers + longPolled.cpu.database).toFixed(2)} vs ${(polled.cpu.controllers + polled.cpu.database).toFixed(2)}`
        )
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
  // SVC_BENCH_PROFILE_DIR: each controller writes a CPU profile (markdown) there when it stops.
  const profileDir = process.env["SVC_BENCH_PROFILE_DIR"]
  const common = {
    SVC_AUTH_DISABLED: "true",
    SVC_SCORING_ROOTS: fixturesDir,
    SVC_LOG_LEVEL: "info",
    SVC_NODE_REQUEUE_GRACE_MS: String(REQUEUE_GRACE_MS),
    ...(profileDir === undefined ? {} : { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${profileDir}` })
  }
  const start = (env: Record<string, string>) =>
    startService("svc-controller", { env: { ...common, ...env }, listeners: ["http", "grpc"] })
  const started: Array<RunningService> = []
  const pg = postgresAvailable() ? await startPostgres({ durable: true }) : undefined
  const stores: Array<Store> = []
  try {
    if (STORES.includes("sqlite")) {
      const sqlite = await start({ SVC_STORE_PATH: join(scratch, "jobs.sqlite") })
      started.push(sqlite)
      stores.push({
        label: "SQLite",
        replicas: [sqlite],
        accounted: { controllers: [sqlite.process.pid], postmaster: undefined }
      })
    }
    if (pg !== undefined) {
      // Counts calls of the store's functions (pg_stat_user_functions).
      const admin = postgres(pg.adminUrl("postgres"), { max: 1, onnotice: () => undefined })
      await admin`ALTER SYSTEM SET track_functions = 'pl'`
      await admin`SELECT pg_reload_conf()`
      await admin.end({ timeout: 1 })
    }
    const postmaster =
      pg === undefined ? undefined : Number(readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0])
    if (pg === undefined) console.log("  PostgreSQL: skipped (PostgreSQL 15 binaries not installed)")
    else
      for (const count of [1, 2].filter((count) => STORES.includes(`pg${count}`))) {
        const database = `bench_${count}`
        await pg.createDatabase(database)
        const env = { SVC_STORE_URL: pg.url(database), SVC_STORE_PASSWORD_FILE: pg.passwordFile }
        const replicas = await Promise.all(Array.from({ length: count }, () => start(env)))
        started.push(...replicas)
        stores.push({
          label: `PostgreSQL ${count} replica${count === 1 ? "" : "s"}`,
          replicas,
          accounted: {
            controllers: replicas.map((replica) => replica.process.pid),
            postmaster,
            database: postgres(pg.adminUrl(database), { max: 1, onnotice: () => undefined })
          }
        })
      }
    // For profilers to attach to (perf record -p, for instance).
    console.log(
      `  processes: ${stores.map((store) => `${store.label} ${store.accounted.controllers.join(" ")}`).join("; ")}${
        postmaster === undefined ? "" : `; PostgreSQL postmaster ${postmaster}`
      }`
    )
    await runAll(stores)
  } finally {
    for (const store of stores) await store.accounted.database?.end({ timeout: 1 })
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
