/**
 * svc-operator's work: SvcJobs become controller jobs and controller jobs write SvcJob status;
 * SvcNodes mirror each tenant's node sessions. Only the Lease holder acts (leader.ts).
 *
 * - A tenant per namespace (tenants.ts): a namespace's SvcJobs are submitted, read and cancelled
 *   with that namespace's own token; a SvcJob in a namespace without one is refused (Failed and
 *   an Event), never submitted.
 * - SvcJobs of each watched namespace: paged list, then watch from the list's resourceVersion;
 *   a full re-list every resync interval and after any watch failure (with back-off). Listing and
 *   watching only queue names; a bounded queue per namespace feeds one worker, so one namespace's
 *   objects never delay another's, and every response read is capped (kube.ts).
 * - A SvcJob without a controller job is submitted with its metadata.uid as idempotency key, so a
 *   restart (or a status write that was lost) never queues it twice. The finalizer is set before
 *   the submit.
 * - status.jobId is trusted only once proven: the controller job's idempotency_key must equal the
 *   SvcJob's uid. Otherwise the true job is recovered by submitting again with the uid as key
 *   (the controller answers the key's job); an unproven id is never read into status or cancelled.
 * - Refusals that retrying cannot fix (NOT_FOUND, INVALID_ARGUMENT, FAILED_PRECONDITION,
 *   PERMISSION_DENIED, a spec over MAX_SPEC_BYTES) end the SvcJob as Failed with the reason.
 * - A deleted SvcJob's controller job is cancelled; the finalizer goes once the cancel is
 *   acknowledged or nothing is left to cancel. A cancel refused CANCEL_ATTEMPTS times (one try per
 *   reconcile, at least one resync interval apart) gives up: the finalizer is removed with a Warning
 *   Event saying the controller job may still run.
 */
import { Duration, Effect, Either, Option, Queue, Ref, Schedule, Stream } from "effect"
import { readFileSync } from "node:fs"
import { makeTokenSource } from "../config/token-file.ts"
import {
  type CallOptions,
  GrpcCallError,
  type ServiceClient,
  Status,
  serviceClient,
  statusName
} from "../transport/grpc/client.ts"
import type { OperatorConfig } from "./config.ts"
import {
  isConflict,
  isNotFound,
  isTooLarge,
  type KubeClient,
  KubeError,
  type KubeList,
  type KubeObject
} from "./kube.ts"
import { type LeaderState, runLeaderElection } from "./leader.ts"
import {
  API_GROUP,
  API_VERSION,
  clip,
  FINAL_PHASES,
  FINALIZER,
  type JobStatus,
  MAX_MESSAGE_LENGTH,
  type NodeStatus,
  PHASE_RANK,
  phaseOfJob,
  refusedStatus,
  statusOfJob,
  statusOfNode,
  svcNodeNameOf,
  type WireJob,
  withCondition
} from "./status.ts"
import type { TenantPlan } from "./tenants.ts"
import type { NodeSession, Outgoing, ScoreRequest } from "../transport/grpc/svc-v1.ts"

/** Its spec is a ScoreRequest in JSON (the CRD's schema), sent to the controller as it is. */
type SvcJob = KubeObject & { readonly spec?: Outgoing<ScoreRequest>; readonly status?: JobStatus }
type SvcNode = KubeObject & {
  readonly metadata: KubeObject["metadata"] & { readonly labels?: Readonly<Record<string, string>> }
  readonly status?: NodeStatus
}

/** Refusals of a submit that retrying cannot fix: the SvcJob ends Failed with the reason. */
export const PERMANENT_REFUSALS: ReadonlySet<Status> = new Set([
  Status.NOT_FOUND,
  Status.INVALID_ARGUMENT,
  Status.FAILED_PRECONDITION,
  Status.PERMISSION_DENIED
])

/** Refusals of a submit that say no job exists for the key (the request itself is refused). */
const REQUEST_REFUSALS: ReadonlySet<Status> = new Set([
  Status.NOT_FOUND,
  Status.INVALID_ARGUMENT,
  Status.FAILED_PRECONDITION
])

/** Tries of a refused cancel before the finalizer is removed anyway (one per reconcile). */
export const CANCEL_ATTEMPTS = 5

/** Largest SvcJob spec submitted (its JSON, in bytes); a larger one ends Failed, unsent. */
export const MAX_SPEC_BYTES = 32 * 1024

/** The label naming the tenant namespace a SvcNode mirrors. */
export const TENANT_NAMESPACE_LABEL = "svc.dev/tenant-namespace"

const CONFLICT_ATTEMPTS = 8

const collection = (namespace: string, plural: string) =>
  `/apis/${API_GROUP}/v1/namespaces/${encodeURIComponent(namespace)}/${plural}`

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const nowIso = () => new Date().toISOString()

const codeName = statusName

/** The size of a value as JSON, in bytes, without building the text (a spec may hold megabytes). */
const jsonBytes = (value: unknown): number => {
  if (typeof value === "string") return Buffer.byteLength(value) + 2
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + jsonBytes(item) + 1, 2)
  if (typeof value === "object" && value !== null)
    return Object.entries(value).reduce((sum, [key, item]) => sum + Buffer.byteLength(key) + 4 + jsonBytes(item), 2)
  return String(value).length
}

const specBytes = (svcJob: SvcJob) => jsonBytes(svcJob.spec ?? {})

const backoff = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

export interface OperatorDeps {
  readonly config: OperatorConfig
  readonly kube: KubeClient
  /** The operator's own namespace (the Lease, SvcNodes). */
  readonly namespace: string
  readonly tenants: TenantPlan
}

/** One tenant namespace: its token and the controller jobs its SvcJobs own. */
interface Tenant {
  readonly namespace: string
  readonly token: Effect.Effect<string | undefined, GrpcCallError>
  /** Controller job id → name of the SvcJob that owns it (proven); pruned at every full list. */
  readonly owners: Map<string, string>
}

/** What deleting a SvcJob did at the controller. */
type CancelOutcome = { readonly _tag: "Cancelled"; readonly jobId: string } | { readonly _tag: "NothingToCancel" }

export const runOperator = (deps: OperatorDeps) =>
  Effect.gen(function* () {
    const { config, kube } = deps
    const caPem = Option.getOrUndefined(Option.map(config.caFile, (path) => readFileSync(path)))
    const options = { address: config.controllerAddress, tls: config.tls, caPem }
    const jobs = yield* serviceClient("svc.v1.Jobs", options)
    const nodeStatus = yield* serviceClient("svc.v1.NodeStatus", options)

    const tenants = new Map<string, Tenant>()
    for (const [namespace, file] of deps.tenants.tokens) {
      const source = yield* makeTokenSource(file)
      // A token file that cannot be read counts as an unavailable controller: retried, never final.
      const token = Effect.mapError(
        source,
        (error) => new GrpcCallError({ method: "token", code: Status.UNAVAILABLE, message: error.message })
      )
      tenants.set(namespace, { namespace, token, owners: new Map() })
    }

    /** A call of the Jobs service with the tenant's token. */
    const call = <Response>(
      tenant: Tenant,
      method: (jobs: ServiceClient<"svc.v1.Jobs">, options: CallOptions) => Effect.Effect<Response, GrpcCallError>
    ) => Effect.flatMap(tenant.token, (bearer) => method(jobs, { bearer }))

    const leader: LeaderState = yield* Ref.make(false)
    const isLeader = Ref.get(leader)
    /** `namespace/name/uid` → refused cancels so far (pruned with the object). */
    const cancelRefusals = new Map<string, number>()
    const cancelKey = (svcJob: SvcJob) =>
      `${svcJob.metadata.namespace ?? ""}/${svcJob.metadata.name}/${svcJob.metadata.uid ?? ""}`

    const objectPath = (namespace: string, name: string) =>
      `${collection(namespace, "svcjobs")}/${encodeURIComponent(name)}`

    /** Forgets what the operator holds about a SvcJob that is gone. */
    const forget = (namespace: string, name: string) => {
      const tenant = tenants.get(namespace)
      if (tenant !== undefined)
        for (const [jobId, owner] of tenant.owners) if (owner === name) tenant.owners.delete(jobId)
      for (const key of cancelRefusals.keys()) if (key.startsWith(`${namespace}/${name}/`)) cancelRefusals.delete(key)
    }

    /**
     * Reads the SvcJob (or starts from `known`, just read), applies `change`, writes it back; a
     * conflict reads again. None: gone.
     */
    const updateWithRetry = (
      namespace: string,
      name: string,
      subresource: "" | "/status",
      change: (fresh: SvcJob) => SvcJob | undefined,
      known?: SvcJob
    ): Effect.Effect<Option.Option<SvcJob>, KubeError> => {
      let unread = known
      const attempt = Effect.gen(function* () {
        const fresh = unread ?? (yield* kube.request<SvcJob>("GET", objectPath(namespace, name)))
        unread = undefined
        const next = change(fresh)
        if (next === undefined) return Option.some(fresh)
        return Option.some(yield* kube.request<SvcJob>("PUT", `${objectPath(namespace, name)}${subresource}`, next))
      })
      return attempt.pipe(
        Effect.retry({ while: isConflict, times: CONFLICT_ATTEMPTS }),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
      )
    }

    const writeStatus = (
      namespace: string,
      name: string,
      compute: (fresh: SvcJob) => JobStatus | undefined,
      known?: SvcJob
    ) =>
      Effect.flatMap(isLeader, (leading) =>
        leading
          ? updateWithRetry(
              namespace,
              name,
              "/status",
              (fresh) => {
                const status = compute(fresh)
                if (status === undefined || JSON.stringify(status) === JSON.stringify(fresh.status ?? {}))
                  return undefined
                return { ...fresh, status }
              },
              known
            )
          : Effect.succeed(Option.none())
      )

    /** The status a proven controller job gives, unless the SvcJob already shows a final phase of it. */
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

    /** Ends a SvcJob as Failed (once) with an Event: a refusal retrying cannot fix. */
    const fail = (namespace: string, svcJob: SvcJob, reason: string, message: string) =>
      Effect.gen(function* () {
        if (svcJob.status?.phase === "Failed" && svcJob.status.error === clip(message, MAX_MESSAGE_LENGTH)) return
        yield* Effect.logWarning("SvcJob refused").pipe(
          Effect.annotateLogs({ svcjob: `${namespace}/${svcJob.metadata.name}`, reason, detail: message })
        )
        yield* writeStatus(
          namespace,
          svcJob.metadata.name,
          (fresh) => refusedStatus(fresh.status, fresh.metadata.generation, reason, message, nowIso()),
          svcJob
        )
        yield* recordEvent(namespace, svcJob, "Warning", reason, message)
      })

    const removeFinalizer = (namespace: string, name: string, known?: SvcJob) =>
      updateWithRetry(
        namespace,
        name,
        "",
        (fresh) =>
          fresh.metadata.finalizers?.includes(FINALIZER)
            ? {
                ...fresh,
                metadata: {
                  ...fresh.metadata,
                  finalizers: fresh.metadata.finalizers.filter((entry) => entry !== FINALIZER)
                }
              }
            : undefined,
        known
      )

    /** The SvcJob's own job by the id in its status, when the job's key proves it (else None). */
    const provenById = (tenant: Tenant, svcJob: SvcJob): Effect.Effect<Option.Option<WireJob>, GrpcCallError> => {
      const jobId = svcJob.status?.jobId
      if (jobId === undefined) return Effect.succeed(Option.none())
      return call(tenant, (jobs, options) => jobs.GetJob({ id: jobId }, options)).pipe(
        Effect.map((job) =>
          job.id === jobId && job.idempotency_key !== "" && job.idempotency_key === svcJob.metadata.uid
            ? Option.some(job)
            : Option.none()
        ),
        // Another tenant's id, or none at all: not this SvcJob's job.
        Effect.catchIf(
          (error) => error.code === Status.NOT_FOUND || error.code === Status.PERMISSION_DENIED,
          () => Effect.succeed(Option.none())
        ),
        Effect.tap((proven) =>
          Option.isNone(proven)
            ? Effect.logWarning("status.jobId is not this SvcJob's job; recovering it by its uid").pipe(
                Effect.annotateLogs({ svcjob: `${tenant.namespace}/${svcJob.metadata.name}`, job_id: jobId })
              )
            : Effect.void
        )
      )
    }

    /** Submits the spec under the uid key: the key's existing job, or a new one. */
    const submitByUid = (tenant: Tenant, svcJob: SvcJob) =>
      call(tenant, (jobs, options) =>
        jobs.SubmitJob({ request: svcJob.spec ?? {}, idempotency_key: svcJob.metadata.uid ?? "" }, options)
      )

    const submit = (tenant: Tenant, svcJob: SvcJob) =>
      Effect.gen(function* () {
        const { namespace } = tenant
        const { name } = svcJob.metadata
        const outcome = yield* Effect.either(submitByUid(tenant, svcJob))
        if (Either.isRight(outcome)) {
          const job = outcome.right
          tenant.owners.set(job.id, name)
          yield* Effect.logInfo("submitted").pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}`, job_id: job.id })
          )
          yield* recordEvent(namespace, svcJob, "Normal", "Submitted", `controller job ${job.id}`)
          yield* applyJob(namespace, name, job)
          return
        }
        const error: GrpcCallError = outcome.left
        const message = `the controller refused the job: ${codeName(error.code)}: ${error.message}`
        if (PERMANENT_REFUSALS.has(error.code)) return yield* fail(namespace, svcJob, "SubmitRefused", message)
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

    /** Cancels the deleted SvcJob's own job: proven by its status id, or recovered by its uid. */
    const cancelOwn = (tenant: Tenant, svcJob: SvcJob): Effect.Effect<CancelOutcome, GrpcCallError> =>
      Effect.gen(function* () {
        const proven = yield* provenById(tenant, svcJob)
        let job: WireJob
        if (Option.isSome(proven)) job = proven.value
        else {
          const phase = svcJob.status?.phase
          // Never sent (oversized), or refused at submit: no job exists for the uid.
          if (specBytes(svcJob) > MAX_SPEC_BYTES) return { _tag: "NothingToCancel" } as const
          if (svcJob.status?.jobId === undefined && phase !== undefined && FINAL_PHASES.has(phase))
            return { _tag: "NothingToCancel" } as const
          const recovered = yield* Effect.either(submitByUid(tenant, svcJob))
          if (Either.isLeft(recovered)) {
            if (REQUEST_REFUSALS.has(recovered.left.code)) return { _tag: "NothingToCancel" } as const
            return yield* recovered.left
          }
          job = recovered.right
        }
        if (FINAL_PHASES.has(phaseOfJob(job))) return { _tag: "NothingToCancel" } as const
        const cancelled = yield* Effect.either(call(tenant, (jobs, options) => jobs.CancelJob({ id: job.id }, options)))
        if (Either.isLeft(cancelled)) {
          if (cancelled.left.code === Status.NOT_FOUND) return { _tag: "NothingToCancel" } as const
          return yield* cancelled.left
        }
        return { _tag: "Cancelled", jobId: job.id } as const
      })

    const finalize = (namespace: string, tenant: Tenant | undefined, svcJob: SvcJob) =>
      Effect.gen(function* () {
        const { name } = svcJob.metadata
        if (tenant === undefined) {
          // No tenant acts here: nothing was ever submitted by this operator's configuration.
          yield* removeFinalizer(namespace, name)
          forget(namespace, name)
          return
        }
        const outcome = yield* Effect.either(cancelOwn(tenant, svcJob))
        if (Either.isLeft(outcome)) {
          const key = cancelKey(svcJob)
          const refusals = (cancelRefusals.get(key) ?? 0) + 1
          cancelRefusals.set(key, refusals)
          const detail = `${codeName(outcome.left.code)}: ${outcome.left.message}`
          if (refusals < CANCEL_ATTEMPTS) {
            yield* Effect.logWarning("cannot cancel the controller job; will retry").pipe(
              Effect.annotateLogs({ svcjob: `${namespace}/${name}`, attempt: refusals, detail })
            )
            return
          }
          yield* recordEvent(
            namespace,
            svcJob,
            "Warning",
            "CancelAbandoned",
            `the controller refused to cancel ${CANCEL_ATTEMPTS} times (${detail}); the finalizer is removed and the controller job of this SvcJob (idempotency key ${svcJob.metadata.uid ?? ""}) may still run`
          )
        } else if (outcome.right._tag === "Cancelled") {
          yield* Effect.logInfo("cancelled").pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}`, job_id: outcome.right.jobId })
          )
          yield* recordEvent(
            namespace,
            svcJob,
            "Normal",
            "Cancelled",
            `controller job ${outcome.right.jobId} cancelled on deletion`
          )
        }
        yield* removeFinalizer(namespace, name)
        forget(namespace, name)
      })

    const reconcile = (namespace: string, name: string): Effect.Effect<void, KubeError | GrpcCallError> =>
      Effect.gen(function* () {
        if (!(yield* isLeader)) return
        // A watch event or list entry may be older than this operator's own last write: read again.
        const svcJob = yield* kube
          .request<SvcJob>("GET", objectPath(namespace, name))
          .pipe(Effect.catchIf(isNotFound, () => Effect.succeed(undefined)))
        if (svcJob === undefined) return forget(namespace, name)
        const tenant = tenants.get(namespace)
        const { deletionTimestamp, finalizers } = svcJob.metadata
        const held = finalizers?.includes(FINALIZER) === true
        if (deletionTimestamp !== undefined) {
          if (held) yield* finalize(namespace, tenant, svcJob)
          return
        }
        const phase = svcJob.status?.phase
        if (tenant === undefined) {
          if (held) yield* removeFinalizer(namespace, name)
          return yield* fail(
            namespace,
            svcJob,
            "NoTenant",
            `namespace "${namespace}" has no tenant in svc-operator (operator.tenants): the SvcJob is not submitted`
          )
        }
        const size = specBytes(svcJob)
        if (size > MAX_SPEC_BYTES) {
          if (held) yield* removeFinalizer(namespace, name)
          return yield* fail(
            namespace,
            svcJob,
            "Oversized",
            `the spec is ${size} bytes; at most ${MAX_SPEC_BYTES} are submitted`
          )
        }
        if (phase !== undefined && FINAL_PHASES.has(phase)) {
          // A final job changes no more: the stream need not find its owner.
          for (const [jobId, owner] of tenant.owners) if (owner === name) tenant.owners.delete(jobId)
          if (!held) return
          // Nothing left to cancel once the job is proven final (or was refused, with no job id).
          if (svcJob.status?.jobId === undefined) return yield* removeFinalizer(namespace, name)
          const proven = yield* provenById(tenant, svcJob)
          if (Option.isSome(proven)) return yield* removeFinalizer(namespace, name)
          return yield* submit(tenant, svcJob)
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
        if (current.status?.jobId === undefined) return yield* submit(tenant, current)
        // Re-read the controller side (after a restart, or a change the stream missed), by a proven id only.
        const proven = yield* provenById(tenant, current)
        if (Option.isNone(proven)) return yield* submit(tenant, current)
        tenant.owners.set(proven.value.id, name)
        yield* applyJob(namespace, name, proven.value)
      })

    const reconcileLogged = (namespace: string, name: string) =>
      reconcile(namespace, name).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`reconcile failed: ${describe(error)}`).pipe(
            Effect.annotateLogs({ svcjob: `${namespace}/${name}` })
          )
        )
      )

    /**
     * Every item of a collection, page by page (`limit`/`continue`); a page over the read cap is
     * asked again with half the limit. Answers the list's resourceVersion.
     */
    /** Page size per collection path: halved when a page is over the read cap, kept for the next list. */
    const pageSizes = new Map<string, number>()
    const listPaged = <T extends KubeObject>(
      path: string,
      onPage: (items: ReadonlyArray<T>) => Effect.Effect<void>
    ): Effect.Effect<string, KubeError> =>
      Effect.gen(function* () {
        let next: string | undefined
        for (;;) {
          const limit = pageSizes.get(path) ?? config.listPageSize
          const query = `?limit=${limit}${next === undefined ? "" : `&continue=${encodeURIComponent(next)}`}`
          const page = yield* Effect.either(kube.request<KubeList<T>>("GET", `${path}${query}`))
          if (Either.isLeft(page)) {
            if (isTooLarge(page.left) && limit > 1) {
              pageSizes.set(path, Math.ceil(limit / 2))
              yield* Effect.logWarning(`a list page was over the read cap; asking ${Math.ceil(limit / 2)} at a time`)
              continue
            }
            return yield* page.left
          }
          yield* onPage(page.right.items)
          next = page.right.metadata.continue
          if (next === undefined || next === "") return page.right.metadata.resourceVersion
        }
      })

    /**
     * Whether a listed or watched SvcJob may need work: one that is final and holds no finalizer
     * of the operator (and is not being deleted) needs none, so it is not queued (nor read again).
     */
    const needsWork = (svcJob: SvcJob) => {
      const phase = svcJob.status?.phase
      return (
        svcJob.metadata.deletionTimestamp !== undefined ||
        svcJob.metadata.finalizers?.includes(FINALIZER) === true ||
        phase === undefined ||
        !FINAL_PHASES.has(phase)
      )
    }

    /** One namespace's reconcile queue: names, each queued at most once, worked in order. */
    const makeWorkQueue = (namespace: string) =>
      Effect.gen(function* () {
        const queue = yield* Queue.bounded<string>(config.queueCapacity)
        const queued = new Set<string>()
        const enqueue = (name: string) =>
          Effect.suspend(() => {
            if (queued.has(name)) return Effect.void
            queued.add(name)
            return Queue.offer(queue, name)
          })
        const worker = Queue.take(queue).pipe(
          Effect.tap((name) => Effect.sync(() => queued.delete(name))),
          Effect.flatMap((name) => reconcileLogged(namespace, name)),
          Effect.forever
        )
        return { enqueue, worker }
      })

    /** One list-then-watch round of a namespace, ended by the resync interval or a watch failure. */
    const watchRound = (namespace: string, enqueue: (name: string) => Effect.Effect<void>) =>
      Effect.gen(function* () {
        if (!(yield* isLeader)) return yield* Effect.sleep(Duration.millis(200))
        const seen = new Set<string>()
        const resourceVersion = yield* listPaged<SvcJob>(collection(namespace, "svcjobs"), (items) =>
          Effect.forEach(
            items,
            (item) => {
              seen.add(item.metadata.name)
              return needsWork(item) ? enqueue(item.metadata.name) : Effect.void
            },
            { discard: true }
          )
        )
        // State of SvcJobs that are gone is dropped (a watch may have missed their deletion).
        const tenant = tenants.get(namespace)
        if (tenant !== undefined)
          for (const [jobId, owner] of tenant.owners) if (!seen.has(owner)) tenant.owners.delete(jobId)
        for (const key of cancelRefusals.keys())
          if (key.startsWith(`${namespace}/`) && !seen.has(key.split("/")[1] ?? "")) cancelRefusals.delete(key)
        yield* kube.watch<SvcJob>(collection(namespace, "svcjobs"), resourceVersion).pipe(
          Stream.interruptAfter(Duration.millis(config.resyncMillis)),
          Stream.runForEach((event) => {
            if (event.type === "ERROR")
              return Effect.fail(new KubeError({ status: 410, reason: "Expired", message: "watch expired" }))
            if (event.type === "BOOKMARK") return Effect.void
            if (event.type === "DELETED") return Effect.sync(() => forget(namespace, event.object.metadata.name))
            return needsWork(event.object) ? enqueue(event.object.metadata.name) : Effect.void
          })
        )
      })

    const watchLoop = (namespace: string, enqueue: (name: string) => Effect.Effect<void>) =>
      watchRound(namespace, enqueue).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(`SvcJob watch failed: ${describe(error)}`).pipe(Effect.annotateLogs({ namespace }))
        ),
        Effect.retry(backoff),
        Effect.forever
      )

    /**
     * Every change of a tenant's controller jobs, written to the SvcJob that owns the job
     * (followed by every replica; only the leader writes).
     */
    const followRound = (tenant: Tenant) =>
      Effect.gen(function* () {
        const bearer = yield* tenant.token
        yield* jobs.StreamJobs({ states: [], follow: true, limit: 1 }, { bearer }).pipe(
          Stream.runForEach((job) => {
            const owner = tenant.owners.get(job.id)
            return owner === undefined
              ? Effect.void
              : applyJob(tenant.namespace, owner, job).pipe(
                  Effect.catchAll((error) => Effect.logWarning(`status write failed: ${describe(error)}`))
                )
          })
        )
      })

    const followLoop = (tenant: Tenant) =>
      followRound(tenant).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(`StreamJobs failed: ${describe(error)}`).pipe(
            Effect.annotateLogs({ namespace: tenant.namespace })
          )
        ),
        Effect.retry(backoff),
        Effect.forever
      )

    const nodesPath = collection(deps.namespace, "svcnodes")
    /** Each tenant's node sessions as SvcNodes in the operator's namespace, read with that tenant's token. */
    const syncNodes = Effect.gen(function* () {
      if (!(yield* isLeader)) return
      const existing: Array<SvcNode> = []
      yield* listPaged<SvcNode>(nodesPath, (items) => Effect.sync(() => existing.push(...items)))
      const wanted = new Map<string, { readonly namespace: string; readonly node: NodeSession }>()
      const answered = new Set<string>()
      for (const tenant of tenants.values()) {
        const listed = yield* Effect.either(
          Effect.flatMap(tenant.token, (bearer) => nodeStatus.ListNodes({}, { bearer }))
        )
        if (Either.isLeft(listed)) {
          yield* Effect.logWarning(`ListNodes failed: ${describe(listed.left)}`).pipe(
            Effect.annotateLogs({ namespace: tenant.namespace })
          )
          continue
        }
        answered.add(tenant.namespace)
        for (const node of listed.right.nodes)
          wanted.set(svcNodeNameOf(tenant.namespace, node.name), { namespace: tenant.namespace, node })
      }
      for (const [name, { namespace, node }] of wanted) {
        let current = existing.find((item) => item.metadata.name === name)
        if (current === undefined) {
          current = yield* kube.request<SvcNode>("POST", nodesPath, {
            apiVersion: API_VERSION,
            kind: "SvcNode",
            metadata: {
              name,
              labels: { "app.kubernetes.io/managed-by": "svc-operator", [TENANT_NAMESPACE_LABEL]: namespace }
            },
            spec: { tenantNamespace: namespace }
          })
        }
        const status = statusOfNode(node, current.status, Date.now())
        if (JSON.stringify(status) !== JSON.stringify(current.status ?? {}))
          yield* kube.request<SvcNode>("PUT", `${nodesPath}/${encodeURIComponent(name)}/status`, {
            ...current,
            status
          })
      }
      for (const item of existing) {
        const namespace = item.metadata.labels?.[TENANT_NAMESPACE_LABEL]
        // A tenant that did not answer keeps its SvcNodes; one no longer configured loses them.
        const stale =
          namespace === undefined ||
          !tenants.has(namespace) ||
          (answered.has(namespace) && !wanted.has(item.metadata.name))
        if (stale)
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
    for (const namespace of deps.tenants.watched) {
      const { enqueue, worker } = yield* makeWorkQueue(namespace)
      yield* Effect.forkScoped(worker)
      yield* Effect.forkScoped(watchLoop(namespace, enqueue))
    }
    for (const tenant of tenants.values()) yield* Effect.forkScoped(followLoop(tenant))
    yield* Effect.forkScoped(nodesLoop)
    yield* Effect.logInfo("svc-operator started").pipe(
      Effect.annotateLogs({
        namespaces: deps.tenants.watched.join(","),
        tenants: [...tenants.keys()].join(","),
        identity: config.identity
      })
    )
    return { isLeader }
  })
