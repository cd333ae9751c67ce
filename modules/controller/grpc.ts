/**
 * The controller's gRPC surface on SVC_GRPC_ADDR: svc.v1.Jobs, svc.v1.Nodes, svc.v1.NodeStatus
 * and svc.v1.SvcScoring (modules/scoring-api's, behind the controller's gate). Every call passes
 * `controllerInterceptor` first (token, then role table); handlers receive the principal and call
 * the job service or the shared scoring path with it.
 */
import { Effect, Either, Layer, Stream } from "effect"
import type { AuthMetrics, AuthStatus, Authenticator, ScoringRoots } from "../auth/index.ts"
import { GRPC_CODES, wireStatus } from "../errors/index.ts"
import { JobService } from "../jobs/index.ts"
import type { Principal } from "../policy/index.ts"
import { grpcCallMetrics, scoringService } from "../scoring-api/grpc.ts"
import type { ScorerState } from "../scoring-api/scorer-state.ts"
import type { ScoringApi } from "../scoring-api/scoring.ts"
import { serviceDefinition } from "../transport/grpc/proto.ts"
import { reflectionServices } from "../transport/grpc/reflection.ts"
import { grpcServiceLayer, type GrpcService, serverStream, unary } from "../transport/grpc/server.ts"
import { controllerGate, controllerInterceptor } from "./gateway.ts"
import {
  decodeHeartbeat,
  decodeGetJob,
  decodeIdempotencyKey,
  decodeJobId,
  decodePullWork,
  decodeRegisterNode,
  decodeReportResult,
  pulledJobMessage,
  decodeReportResults,
  decodeStreamJobs,
  decodeSubmitJob,
  jobMessage,
  nodeSessionMessage
} from "./wire.ts"

type Handlers = GrpcService<Principal, JobService | ScorerState>

/** svc.v1.Jobs: every call reads and writes only the caller's tenant's jobs. */
const jobsService: Handlers = {
  definition: serviceDefinition("svc.v1.Jobs"),
  methods: {
    SubmitJob: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const submitted = yield* decodeSubmitJob(request)
        const idempotencyKey = yield* decodeIdempotencyKey(request)
        const jobs = yield* JobService
        return jobMessage(yield* jobs.submit(principal, submitted.request, idempotencyKey))
      })
    ),
    GetJob: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { id, window } = yield* decodeGetJob(request)
        const jobs = yield* JobService
        return jobMessage(yield* jobs.get(principal, id), [], window)
      })
    ),
    StreamJobs: serverStream((request, { context: principal }) =>
      Stream.unwrap(
        Effect.gen(function* () {
          const filter = yield* decodeStreamJobs(request)
          const jobs = yield* JobService
          return Stream.map(jobs.stream(principal, filter), (job) => jobMessage(job))
        })
      )
    ),
    CancelJob: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { id } = yield* decodeJobId(request)
        const jobs = yield* JobService
        return jobMessage(yield* jobs.cancel(principal, id))
      })
    )
  }
}

/** svc.v1.Nodes: sessions belong to the registering token's tenant. */
const nodesService: Handlers = {
  definition: serviceDefinition("svc.v1.Nodes"),
  methods: {
    RegisterNode: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const info = yield* decodeRegisterNode(request)
        const jobs = yield* JobService
        const registration = yield* jobs.register(principal, info)
        return {
          node_id: registration.nodeId,
          heartbeat_interval_ms: registration.heartbeatIntervalMillis,
          session_ttl_ms: registration.sessionTtlMillis
        }
      })
    ),
    Heartbeat: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { node_id, running_job_ids, hand_back_unlisted, memory_needs, running_segments } =
          yield* decodeHeartbeat(request)
        const jobs = yield* JobService
        const needs = memory_needs.map((need) => ({
          jobId: need.job_id,
          bytes: need.memory_bytes,
          segment: need.segment ? need.segment_index : undefined
        }))
        const segments = running_segments.map((segment) => ({ jobId: segment.job_id, index: segment.index }))
        return {
          ok: yield* jobs.heartbeat(principal, node_id, running_job_ids, hand_back_unlisted, needs, segments)
        }
      })
    ),
    PullWork: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { node_id, max_jobs, wait_ms, free_memory_bytes, memory_budget_bytes } = yield* decodePullWork(request)
        const jobs = yield* JobService
        const memory = { freeBytes: free_memory_bytes, budgetBytes: memory_budget_bytes }
        const pulled = yield* jobs.pullWork(principal, node_id, max_jobs, wait_ms, memory)
        return { jobs: pulled.map(pulledJobMessage) }
      })
    ),
    ReportResult: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { nodeId, jobId, report } = yield* decodeReportResult(request)
        const jobs = yield* JobService
        return { job: jobMessage(yield* jobs.reportResult(principal, nodeId, jobId, report)) }
      })
    ),
    // Each report is decoded and decided on its own: one that is refused (or malformed) is that
    // report's outcome, with the status ReportResult would answer; a store failure fails the call.
    ReportResults: unary((request, { context: principal }) =>
      Effect.gen(function* () {
        const { node_id, reports } = yield* decodeReportResults(request)
        const decoded = yield* Effect.forEach(reports, (report) =>
          Effect.either(decodeReportResult({ ...(report as object), node_id }))
        )
        const valid = decoded.flatMap((one) => (Either.isRight(one) ? [one.right] : []))
        const jobs = yield* JobService
        const applied = yield* jobs.reportResults(principal, node_id, valid)
        let next = 0
        const jobIdOf = (report: unknown) =>
          typeof report === "object" && report !== null && "job_id" in report ? String(report.job_id) : ""
        const refused = (jobId: string, error: unknown) => {
          const status = wireStatus(error)
          return { job_id: jobId, job: null, code: GRPC_CODES[status.grpc], message: status.message }
        }
        return {
          outcomes: decoded.map((one, index) => {
            if (Either.isLeft(one)) return refused(jobIdOf(reports[index]), one.left)
            const outcome = applied[next++]
            if (outcome === undefined) return refused(one.right.jobId, undefined)
            return Either.isLeft(outcome)
              ? refused(one.right.jobId, outcome.left)
              : { job_id: one.right.jobId, job: jobMessage(outcome.right.job), code: 0, message: "" }
          })
        }
      })
    )
  }
}

/** svc.v1.NodeStatus: a read of the caller's tenant's node sessions, for user tokens (issue 21). */
const nodeStatusService: Handlers = {
  definition: serviceDefinition("svc.v1.NodeStatus"),
  methods: {
    ListNodes: unary((_request, { context: principal }) =>
      Effect.gen(function* () {
        const jobs = yield* JobService
        return { nodes: (yield* jobs.nodes(principal)).map(nodeSessionMessage) }
      })
    )
  }
}

/** Every service the controller registers; the role-table test enumerates their methods. */
export const controllerGrpcServices = [
  jobsService,
  nodesService,
  nodeStatusService,
  scoringService(controllerGate),
  ...reflectionServices<Principal>(["svc.v1.Jobs", "svc.v1.Nodes", "svc.v1.NodeStatus", "svc.v1.SvcScoring"])
] as const

/** What the controller's handlers and interceptor need. */
export type ControllerGrpcRequirements =
  | JobService
  | ScoringRoots
  | ScoringApi
  | ScorerState
  | Authenticator
  | AuthMetrics
  | AuthStatus

/** The controller's gRPC listener on SVC_GRPC_ADDR, counted in `svc_grpc_requests_total`. */
export const controllerGrpcLayer = (name: string) =>
  Layer.unwrapEffect(
    Effect.map(grpcCallMetrics, (onCallEnd) =>
      grpcServiceLayer<Principal, ControllerGrpcRequirements>({
        name,
        services: controllerGrpcServices,
        intercept: controllerInterceptor,
        onCallEnd
      })
    )
  )
