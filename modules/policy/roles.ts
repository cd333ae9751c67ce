/**
 * The role table of the controller contract (seed 4.1, 4.2) as data: the single
 * source `authorize`, the gateway and the tests read.
 */

export const KNOWN_ROLES = ["svc:reader", "svc:writer", "svc:admin", "svc:node"] as const
export type Role = (typeof KNOWN_ROLES)[number]

export const isKnownRole = (value: string): value is Role => (KNOWN_ROLES as ReadonlyArray<string>).includes(value)

/** gRPC package of the controller interface. */
export const GRPC_PACKAGE = "svc.v1"

const grpcMethod = (service: string, method: string): string => `/${GRPC_PACKAGE}.${service}/${method}`

const READ: ReadonlyArray<Role> = ["svc:reader", "svc:writer", "svc:admin"]
const WRITE: ReadonlyArray<Role> = ["svc:writer", "svc:admin"]
const NODE: ReadonlyArray<Role> = ["svc:node"]

/** Fully-qualified gRPC method names, as the transport sees them. */
export const GrpcMethods = {
  SubmitJob: grpcMethod("Jobs", "SubmitJob"),
  GetJob: grpcMethod("Jobs", "GetJob"),
  StreamJobs: grpcMethod("Jobs", "StreamJobs"),
  CancelJob: grpcMethod("Jobs", "CancelJob"),
  RegisterNode: grpcMethod("Nodes", "RegisterNode"),
  Heartbeat: grpcMethod("Nodes", "Heartbeat"),
  PullWork: grpcMethod("Nodes", "PullWork"),
  ReportResult: grpcMethod("Nodes", "ReportResult"),
  ReportResults: grpcMethod("Nodes", "ReportResults"),
  Score: grpcMethod("SvcScoring", "Score"),
  ScoreStream: grpcMethod("SvcScoring", "ScoreStream"),
  Health: grpcMethod("SvcScoring", "Health"),
  ListModels: grpcMethod("SvcScoring", "ListModels"),
  ScoreLadder: grpcMethod("SvcScoring", "ScoreLadder"),
  /** gRPC server reflection (both versions): public metadata, with the roles of Health. */
  ServerReflectionInfo: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  ServerReflectionInfoV1Alpha: "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
  ListNodes: grpcMethod("NodeStatus", "ListNodes")
} as const

/** The one HTTP route behind the gateway (seed 4.2), keyed like a method. */
export const HTTP_SCORE_ROUTE = "POST /v1/score"

/** A ladder (one reference, many renditions): a score, so the writer roles, as Score. */
export const HTTP_LADDER_ROUTE = "POST /v1/ladder"

/** The model list behind the gateway (not in the seed: a read, so the reader roles, as Health). */
export const HTTP_MODELS_ROUTE = "GET /v1/models"

/**
 * Every role that may make each call. Roles are not inherited (seed 5.4.5):
 * each row lists all of them. A method missing here is refused for everyone.
 */
export const ROLE_TABLE: ReadonlyMap<string, ReadonlyArray<Role>> = new Map<string, ReadonlyArray<Role>>([
  [GrpcMethods.GetJob, READ],
  [GrpcMethods.StreamJobs, READ],
  [GrpcMethods.Health, READ],
  [GrpcMethods.ListModels, READ],
  [GrpcMethods.ServerReflectionInfo, READ],
  [GrpcMethods.ServerReflectionInfoV1Alpha, READ],
  // Not in the seed (issue 21): a tenant-scoped read of the node sessions, so the reader roles.
  [GrpcMethods.ListNodes, READ],
  [GrpcMethods.SubmitJob, WRITE],
  [GrpcMethods.CancelJob, WRITE],
  [GrpcMethods.Score, WRITE],
  [GrpcMethods.ScoreStream, WRITE],
  [GrpcMethods.ScoreLadder, WRITE],
  [GrpcMethods.RegisterNode, NODE],
  [GrpcMethods.Heartbeat, NODE],
  [GrpcMethods.PullWork, NODE],
  [GrpcMethods.ReportResult, NODE],
  // Not in the seed (issue 35): several ReportResult calls in one, the same node-only API.
  [GrpcMethods.ReportResults, NODE],
  [HTTP_SCORE_ROUTE, WRITE],
  [HTTP_LADDER_ROUTE, WRITE],
  [HTTP_MODELS_ROUTE, READ]
])

/** Served methods absent from the table: the controller's tests assert this is empty (seed 4.1). */
export const unlistedMethods = (served: Iterable<string>): ReadonlyArray<string> =>
  [...served].filter((method) => !ROLE_TABLE.has(method))
