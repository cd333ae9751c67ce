/**
 * svc-operator's work: SvcJobs become controller jobs and controller jobs write SvcJob status;
 * SvcNodes mirror the tenant's node sessions. Only the Lease holder acts (leader.ts).
 *
 * - SvcJobs of each watched namespace: list, then watch from the list's resourceVersion; a full
 *   re-list every resync interval and after any watch failure (with back-off).
 * - A SvcJob without a controller job is submitted with its metadata.uid as idempotency key, so a
 *   restart (or a status write that was lost) never queues it twice: the controller returns the
 *   job of the first submit. The finalizer is set before the submit.
 * - StreamJobs(follow) carries every change of the tenant's jobs to the SvcJob that owns it; a
 *   re-list reads the controller job again (GetJob), so nothing depends on the stream alone.
 * - Status is written through the status subresource with the resourceVersion just read; a 409
 *   reads again and retries.
 * - A deleted SvcJob's controller job is cancelled; the finalizer is removed once the cancel is
 *   acknowledged or the job is already final.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Either, Option, Ref, Schedule, Stream } from "effect"
import { readFileSync } from "node:fs"
import { makeTokenSource } from "../config/token-file.ts"
import { bearerMetadata, callUnary, GrpcCallError, makeClient } from "../transport/grpc/client.ts"
import type { OperatorConfig } from "./config.ts"
import { isConflict, isNotFound, type KubeClient, KubeError, type KubeList, type KubeObject } from "./kube.ts"
import { type LeaderState, runLeaderElection } from "./leader.ts"
import {
  API_GROUP,
  API_VERSION,
  FINAL_PHASES,
  FINALIZER,
  type JobStatus,
  PHASE_RANK,
  phaseOfJob,
  type NodeStatus,
  refusedStatus,
  resourceNameOf,
  statusOfJob,
  statusOfNode,
  type WireJob,
  type WireNodeSession,
  withCondition
} from "./status.ts"

type SvcJob = KubeObject & { readonly spec: Record<string, unknown>; readonly status?: JobStatus }
type SvcNode = KubeObject & { readonly status?: NodeStatus }

/** Failures of a submit that retrying cannot fix: the SvcJob fails with a clear condition. */
const PERMANENT_SUBMIT_FAILURES = new Set([
  grpc.status.PERMISSION_DENIED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNAUTHENTICATED
])

const CONFLICT_ATTEMPTS = 8

const collection = (namespace: string, plural: string) =>
  `/apis/${API_GROUP}/v1/namespaces/${encodeURIComponent(namespace)}/${plural}`

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const nowIso = () => new Date().toISOString()

const backoff = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

export interface OperatorDeps {
  readonly config: OperatorConfig
  readonly kube: KubeClient
  /** The operator's own namespace (leases, SvcNodes). */
  readonly namespace: string
  readonly watched: ReadonlyArray<string>
}

export const runOperator = (deps: OperatorDeps) =>
  Effect.gen(function* () {
    const { config, kube } = deps
    const token = yield* makeTokenSource(config.tokenFile)
    const caPem = Option.getOrUndefined(Option.map(config.caFile, (path) => readFileSync(path)))
    const options = { address: config.controllerAddress, tls: config.tls, caPem }
    const jobsClient = yield* Effect.acquireRelease(
      Effect.sync(() => makeClient("svc.v1.Jobs", options)),
      (client) => Effect.sync(() => client.close())
    )
    const nodesClient = yield* Effect.acquireRelease(
      Effect.sync(() => makeClient("svc.v1.NodeStatus", options)),
      (client) => Effect.sync(() => client.close())
    )
    // A token file that cannot be read counts as an unavailable controller: retried, never final.
    const call = <Response>(client: grpc.Client, method: string, request: object) =>
      Effect.flatMap(
        Effect.mapError(
          token,
          (error) => new GrpcCallError({ method, code: grpc.status.UNAVAILABLE, message: error.message })
        ),
        (bearer) => callUnary<Response>(client, method, request, bearerMetadata(bearer))
      )

    const leader: LeaderState = yield* Ref.make(false)
    const isLeader = Ref.get(leader)
    /** Controller job id → the SvcJob that owns it. */
    const owners = yield* Ref.make(new Map<string, { readonly namespace: string; readonly name: string }>())

    const objectPath = (namespace: string, name: string) =>
      `${collection(namespace, "svcjobs")}/${encodeURIComponent(name)}`

    /** Reads the SvcJob, applies `change`, writes it back; a conflict reads again. None: gone. */
    const updateWithRetry = (
      namespace: string,
      name: string,
      subresource: "" | "/status",
      change: (fresh: SvcJob) => SvcJob | undefined
    ): Effect.Effect<Option.Option<SvcJob>, KubeError> => {
      const attempt = Effect.gen(function* () {
        const fresh = yield* kube.request<SvcJob>("GET", objectPath(namespace, name))
        const next = change(fresh)
        if (next === undefined) return Option.some(fresh)
        return Option.some(yield* kube.request<SvcJob>("PUT", `${objectPath(namespace, name)}${subresource}`, next))
      })
      return attempt.pipe(
        Effect.retry({ while: isConflict, times: CONFLICT_ATTEMPTS }),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
      )
    }

    const writeStatus = (namespace: string, name: string, compute: (fresh: SvcJob) => JobStatus | undefined) =>
      Effect.flatMap(isLeader, (leading) =>
        leading
          ? updateWithRetry(namespace, name, "/status", (fresh) => {
              const status = compute(fresh)
              if (status === undefined || JSON.stringify(status) === JSON.stringify(fresh.status ?? {}))
                return undefined
              return { ...fresh, status }
            })
          : Effect.succeed(Option.none())
      )

    /** The status a controller job gives, unless the SvcJob already shows a final phase of it. */
    const applyJob = (namespace: string, name: string, job: WireJob) =>
      writeStatus(namespace, name, (fresh) => {
        const current = fresh.status
        // Snapshots may arrive out of order (a submit's answer and the stream): a phase never goes back.
        if (current?.jobId === job.id && PHASE_RANK[current.phase ?? "Pending"] > PHASE_RANK[phaseOfJob(job)])
          return undefined
        if (current?.jobId === job.id && current.phase !== undefined && FINAL_PHASES.has(current.phase))
          return undefined
        return statusOfJob(job, current, fresh.metadata.generation, nowIso())
      }).pipe(
        Effect.tap((written) =>
          Option.isSome(written) && written.value.status?.phase !== undefined
            ? Effect.logDebug("status written").pipe(
                Effect.annotateLogs({ svcjob: `${namespace}/${name}`, phase: written.value.status.phase })
              )
            : Effect.void
        )
      )

    /** A core/v1 Event on the SvcJob (`kubectl describe svcjob`); a failure to record one is only logged. */
    const recordEvent = (
      namespace: string,
      svcJob: SvcJob,
      type: "Normal" | "Warning",
      reason: string,
      message: string
    ) => {
      const now = nowIso()
      return kube
        .request("POST", `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
          apiVersion: "v1",
          kind: "Event",
          metadata: { generateName: `${svcJob.metadata.name}.`, namespace },
          involvedObject: {
            apiVersion: API_VERSION,
            kind: "SvcJob",
            name: svcJob.metadata.name,
            namespace,
            uid: svcJob.metadata.uid,
            resourceVersion: svcJob.metadata.resourceVersion
          },
          type,
          reason,
          message,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: "svc-operator" },
          reportingComponent: "svc-operator",
          reportingInstance: config.identity
        })
        .pipe(Effect.catchAll((error) => Effect.logDebug(`cannot record an event: ${describe(error)}`)))
    }

    const removeFinalizer = (namespace: string, name: string) =>
      updateWithRetry(namespace, name, "", (fresh) =>
        fresh.metadata.finalizers?.includes(FINALIZER)
          ? {
              ...fresh,
              metadata: {
                ...fresh.metadata,
                finalizers: fresh.metadata.finalizers.filter((entry) => entry !== FINALIZER)
              }
            }
          : undefined
      )

    const submit = (namespace: string, svcJob: SvcJob) =>
      Effect.gen(function* () {
        const { name, uid, generation } = svcJob.metadata
        const outcome = yield* Effect.either(
          call<WireJob>(jobsClient, "SubmitJob", { request: svcJob.spec, idempotency_key: uid ?? "" })
        )
        if (Either.isRight(outcome)) {
          const job = outcome.right
          yield* Ref.update(owners, (map) => new Map(map).set(job.id, { namespace, name }))
          yield* Effect.logInfo("submitted").pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}`, job_id: job.id })
          )
          yield* recordEvent(namespace, svcJob, "Normal", "Submitted", `controller job ${job.id}`)
          yield* applyJob(namespace, name, job)
          return
        }
        const error: GrpcCallError = outcome.left
        const reason = grpc.status[error.code] ?? String(error.code)
        const message = `the controller refused the job: ${reason}: ${error.message}`
        if (PERMANENT_SUBMIT_FAILURES.has(error.code)) {
          yield* Effect.logWarning("submit refused").pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}`, code: reason, detail: error.message })
          )
          yield* writeStatus(namespace, name, (fresh) =>
            refusedStatus(fresh.status, generation, "SubmitRefused", message, nowIso())
          )
          yield* recordEvent(namespace, svcJob, "Warning", "SubmitRefused", message)
          return
        }
        // The controller is away or busy: say so, and try again at the next resync.
        yield* writeStatus(namespace, name, (fresh) => ({
          ...fresh.status,
          phase: "Pending",
          conditions: withCondition(
            fresh.status?.conditions,
            { type: "Submitted", status: "Unknown", reason: "ControllerUnavailable", message },
            nowIso()
          )
        }))
      })

    const finalize = (namespace: string, svcJob: SvcJob) =>
      Effect.gen(function* () {
        const { name } = svcJob.metadata
        const jobId = svcJob.status?.jobId
        if (jobId !== undefined) {
          const cancelled = yield* Effect.either(call<WireJob>(jobsClient, "CancelJob", { id: jobId }))
          if (Either.isLeft(cancelled) && cancelled.left.code !== grpc.status.NOT_FOUND) {
            yield* Effect.logWarning("cannot cancel the controller job; will retry").pipe(
              Effect.annotateLogs({ svcjob: `${namespace}/${name}`, job_id: jobId, detail: cancelled.left.message })
            )
            return
          }
          yield* Effect.logInfo("cancelled").pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}`, job_id: jobId })
          )
          yield* recordEvent(namespace, svcJob, "Normal", "Cancelled", `controller job ${jobId} cancelled on deletion`)
        }
        yield* removeFinalizer(namespace, name)
      })

    const reconcile = (namespace: string, seen: SvcJob): Effect.Effect<void, KubeError> =>
      Effect.gen(function* () {
        if (!(yield* isLeader)) return
        // A watch event or list entry may be older than this operator's own last write: read again.
        const svcJob = yield* kube
          .request<SvcJob>("GET", objectPath(namespace, seen.metadata.name))
          .pipe(Effect.catchIf(isNotFound, () => Effect.succeed(undefined)))
        if (svcJob === undefined) return
        const { name, deletionTimestamp, finalizers } = svcJob.metadata
        const held = finalizers?.includes(FINALIZER) === true
        if (deletionTimestamp !== undefined) {
          if (held) yield* finalize(namespace, svcJob)
          return
        }
        const phase = svcJob.status?.phase
        const jobId = svcJob.status?.jobId
        if (jobId !== undefined) yield* Ref.update(owners, (map) => new Map(map).set(jobId, { namespace, name }))
        if (phase !== undefined && FINAL_PHASES.has(phase)) {
          // Nothing left to cancel: the finalizer has done its work.
          if (held) yield* removeFinalizer(namespace, name)
          return
        }
        let current = svcJob
        if (!held) {
          const updated = yield* updateWithRetry(namespace, name, "", (fresh) =>
            fresh.metadata.deletionTimestamp !== undefined || fresh.metadata.finalizers?.includes(FINALIZER)
              ? undefined
              : {
                  ...fresh,
                  metadata: { ...fresh.metadata, finalizers: [...(fresh.metadata.finalizers ?? []), FINALIZER] }
                }
          )
          if (Option.isNone(updated) || updated.value.metadata.deletionTimestamp !== undefined) return
          current = updated.value
        }
        if (jobId === undefined) {
          yield* submit(namespace, current)
          return
        }
        // Re-read the controller side (after a restart, or a change the stream missed).
        const found = yield* Effect.either(call<WireJob>(jobsClient, "GetJob", { id: jobId }))
        if (Either.isRight(found)) yield* applyJob(namespace, name, found.right)
        else if (found.left.code === grpc.status.NOT_FOUND)
          yield* writeStatus(namespace, name, (fresh) =>
            refusedStatus(
              fresh.status,
              fresh.metadata.generation,
              "ControllerJobMissing",
              `controller job ${jobId} no longer exists`,
              nowIso()
            )
          )
      })

    const reconcileLogged = (namespace: string, svcJob: SvcJob) =>
      reconcile(namespace, svcJob).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`reconcile failed: ${describe(error)}`).pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${svcJob.metadata.name}` })
          )
        )
      )

    /** One list-then-watch round of a namespace, ended by the resync interval or a watch failure. */
    const watchRound = (namespace: string) =>
      Effect.gen(function* () {
        if (!(yield* isLeader)) return yield* Effect.sleep(Duration.millis(200))
        const list = yield* kube.request<KubeList<SvcJob>>("GET", collection(namespace, "svcjobs"))
        yield* Effect.forEach(list.items, (item) => reconcileLogged(namespace, item), { discard: true })
        yield* kube.watch<SvcJob>(collection(namespace, "svcjobs"), list.metadata.resourceVersion).pipe(
          Stream.interruptAfter(Duration.millis(config.resyncMillis)),
          Stream.runForEach((event) => {
            if (event.type === "ERROR")
              return Effect.fail(new KubeError({ status: 410, reason: "Expired", message: "watch expired" }))
            if (event.type === "BOOKMARK" || event.type === "DELETED") return Effect.void
            return reconcileLogged(namespace, event.object)
          })
        )
      })

    const watchLoop = (namespace: string) =>
      watchRound(namespace).pipe(
        Effect.tapError((error) => Effect.logWarning(`SvcJob watch failed: ${describe(error)}`)),
        Effect.retry(backoff),
        Effect.forever
      )

    /**
     * Every change of the tenant's controller jobs, written to the SvcJob that owns the job
     * (followed by every replica; only the leader writes).
     */
    const followRound = Effect.gen(function* () {
      const bearer = yield* token
      yield* Stream.async<WireJob, GrpcCallError>((emit) => {
        const method = Reflect.get(jobsClient, "StreamJobs") as (
          request: object,
          metadata: grpc.Metadata
        ) => grpc.ClientReadableStream<WireJob>
        const stream = method.call(jobsClient, { states: [], follow: true, limit: 1 }, bearerMetadata(bearer))
        stream.on("data", (job: WireJob) => void emit.single(job))
        stream.on(
          "error",
          (error: grpc.ServiceError) =>
            void emit.fail(new GrpcCallError({ method: "StreamJobs", code: error.code, message: error.details }))
        )
        stream.on("end", () => void emit.end())
        return Effect.sync(() => stream.cancel())
      }).pipe(
        Stream.runForEach((job) =>
          Effect.flatMap(Ref.get(owners), (map) => {
            const owner = map.get(job.id)
            return owner === undefined
              ? Effect.void
              : applyJob(owner.namespace, owner.name, job).pipe(
                  Effect.catchAll((error) => Effect.logWarning(`status write failed: ${describe(error)}`))
                )
          })
        )
      )
    })

    const followLoop = followRound.pipe(
      Effect.tapError((error) => Effect.logWarning(`StreamJobs failed: ${describe(error)}`)),
      Effect.retry(backoff),
      Effect.forever
    )

    const nodesPath = collection(deps.namespace, "svcnodes")
    const syncNodes = Effect.gen(function* () {
      if (!(yield* isLeader)) return
      const { nodes } = yield* call<{ nodes: ReadonlyArray<WireNodeSession> }>(nodesClient, "ListNodes", {})
      const existing = yield* kube.request<KubeList<SvcNode>>("GET", nodesPath)
      const wanted = new Map(nodes.map((node) => [resourceNameOf(node.name), node]))
      for (const [name, node] of wanted) {
        const path = `${nodesPath}/${encodeURIComponent(name)}`
        let current = existing.items.find((item) => item.metadata.name === name)
        if (current === undefined) {
          current = yield* kube.request<SvcNode>("POST", nodesPath, {
            apiVersion: API_VERSION,
            kind: "SvcNode",
            metadata: { name, labels: { "app.kubernetes.io/managed-by": "svc-operator" } },
            spec: {}
          })
        }
        const status = statusOfNode(node, current.status, Date.now())
        if (JSON.stringify(status) !== JSON.stringify(current.status ?? {}))
          yield* kube.request<SvcNode>("PUT", `${path}/status`, { ...current, status })
      }
      for (const item of existing.items) {
        if (!wanted.has(item.metadata.name))
          yield* kube
            .request("DELETE", `${nodesPath}/${encodeURIComponent(item.metadata.name)}`)
            .pipe(Effect.catchIf(isNotFound, () => Effect.void))
      }
    })

    const nodesLoop = Effect.repeat(
      syncNodes.pipe(Effect.catchAll((error) => Effect.logWarning(`SvcNode sync failed: ${describe(error)}`))),
      Schedule.spaced(Duration.millis(Math.min(config.resyncMillis, 10_000)))
    )

    yield* Effect.forkScoped(runLeaderElection(kube, deps.namespace, config, leader))
    for (const namespace of deps.watched) yield* Effect.forkScoped(watchLoop(namespace))
    yield* Effect.forkScoped(followLoop)
    yield* Effect.forkScoped(nodesLoop)
    yield* Effect.logInfo("svc-operator started").pipe(
      Effect.annotateLogs({ namespaces: deps.watched.join(","), identity: config.identity })
    )
    return { isLeader }
  })
