/**
 * The one error table: every typed failure that can reach a caller, by its `_tag`, with the gRPC
 * status and HTTP status it answers, the message the caller reads, and whether it carries a reason
 * that only the log sees. Both transports (modules/transport/errors.ts for gRPC, the HTTP routes)
 * and the scoring path's log line read `wireStatus`; the tests read `ERROR_TABLE`.
 *
 * Domain modules define their errors (policy, scorer, scoring-api, jobs) and import nothing from
 * a transport library: gRPC codes are named here as in grpc/status.proto. This module imports
 * nothing of the project: every module may read it, and it depends on none.
 */

/** The canonical gRPC status codes (grpc/status.proto), by name. */
export const GRPC_CODES = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16
} as const

export type GrpcCodeName = keyof typeof GRPC_CODES

/** The name of a numeric gRPC code (the log lines and metrics name codes). */
export const grpcCodeName = (code: number): string =>
  (Object.keys(GRPC_CODES) as ReadonlyArray<GrpcCodeName>).find((name) => GRPC_CODES[name] === code) ?? String(code)

/**
 * Every tag a caller may be answered with, by the module that defines the class. The module
 * imports none of them (it is a leaf every transport can read); table.test.ts holds this list
 * to the classes' own tags, so a new error class that reaches the edge cannot miss its row.
 */
export type ErrorTag =
  // modules/policy/errors.ts
  | "Unauthenticated"
  | "PermissionDenied"
  | "Unavailable"
  // modules/scorer/errors.ts
  | "InvalidScoreRequest"
  | "UnknownModel"
  | "UnreadableInput"
  | "InvalidGeometry"
  | "InputNotFound"
  | "UnsupportedInput"
  | "ScoreTooLarge"
  | "ScoreMemoryBusy"
  | "ScorerBusy"
  | "ScorerInternal"
  // modules/scoring-api/errors.ts
  | "BodyTooLarge"
  | "ScorerNotReady"
  | "TenantScoresBusy"
  | "UnsupportedMediaType"
  // modules/jobs/errors.ts
  | "JobNotFound"
  | "InvalidJobRequest"
  | "NodeSessionNotLive"
  | "JobStoreFailure"
  | "JobStoreUnavailable"
  // modules/transport/grpc/server.ts
  | "GrpcInputError"

/**
 * A failure that may reach a caller: a tagged error whose tag has a row in the table. The edges
 * (the gRPC server's interceptor and handlers, the scoring gate) take failures of this type only,
 * so an error class without a row does not compile there; defects still answer INTERNAL.
 */
export interface EdgeError {
  readonly _tag: ErrorTag
  readonly message: string
}

export interface ErrorRow {
  readonly grpc: GrpcCodeName
  readonly http: number
  /** A fixed text the caller reads instead of the error's own message; absent: its own message. */
  readonly publicMessage?: string
  /** The error carries a reason (`reason`/`detail`) that goes to the log only, never to the caller. */
  readonly reasonLoggedOnly: boolean
}

/** Failures the table does not list (defects, unknown values) answer this. */
export const INTERNAL_ERROR: ErrorRow = {
  grpc: "INTERNAL",
  http: 500,
  publicMessage: "internal error",
  reasonLoggedOnly: true
}

export const ERROR_TABLE: Readonly<Record<ErrorTag, ErrorRow>> = {
  // Policy refusals (seed 000, section 7); their messages are the seed's fixed texts (policy/errors.ts).
  // A refused token always reads `invalid or missing token`; why is logged and counted (5.8.9).
  Unauthenticated: { grpc: "UNAUTHENTICATED", http: 401, reasonLoggedOnly: true },
  PermissionDenied: { grpc: "PERMISSION_DENIED", http: 403, reasonLoggedOnly: false },
  Unavailable: { grpc: "UNAVAILABLE", http: 503, reasonLoggedOnly: false },
  // The scoring path (seed 001, section 7).
  InvalidScoreRequest: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false },
  UnknownModel: { grpc: "NOT_FOUND", http: 400, reasonLoggedOnly: false },
  UnreadableInput: { grpc: "NOT_FOUND", http: 400, reasonLoggedOnly: false },
  InvalidGeometry: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false },
  InputNotFound: { grpc: "NOT_FOUND", http: 404, reasonLoggedOnly: false },
  UnsupportedInput: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false },
  ScoreTooLarge: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false },
  ScoreMemoryBusy: { grpc: "RESOURCE_EXHAUSTED", http: 429, reasonLoggedOnly: false },
  TenantScoresBusy: { grpc: "RESOURCE_EXHAUSTED", http: 429, reasonLoggedOnly: false },
  UnsupportedMediaType: { grpc: "INVALID_ARGUMENT", http: 415, reasonLoggedOnly: false },
  ScorerBusy: { grpc: "RESOURCE_EXHAUSTED", http: 429, reasonLoggedOnly: false },
  BodyTooLarge: { grpc: "RESOURCE_EXHAUSTED", http: 413, reasonLoggedOnly: false },
  // "internal scoring error" is the class's own message; the native library's detail is logged.
  ScorerInternal: { grpc: "INTERNAL", http: 500, reasonLoggedOnly: true },
  ScorerNotReady: { grpc: "UNAVAILABLE", http: 503, reasonLoggedOnly: false },
  // Jobs and nodes (the controller).
  JobNotFound: { grpc: "NOT_FOUND", http: 404, reasonLoggedOnly: false },
  InvalidJobRequest: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false },
  // The node's session expired or predates a controller restart: the node registers again.
  NodeSessionNotLive: { grpc: "NOT_FOUND", http: 404, reasonLoggedOnly: false },
  // PostgreSQL unreachable: nothing was acknowledged, the caller retries (a node fails over).
  JobStoreUnavailable: { grpc: "UNAVAILABLE", http: 503, reasonLoggedOnly: false },
  // I/O, lock timeout, corrupt row: the caller reads only "internal error".
  JobStoreFailure: INTERNAL_ERROR,
  GrpcInputError: { grpc: "INVALID_ARGUMENT", http: 400, reasonLoggedOnly: false }
}

export interface WireStatus {
  readonly http: number
  readonly grpc: GrpcCodeName
  /** The caller-visible message (internal details stay in the log). */
  readonly message: string
}

const isErrorTag = (tag: unknown): tag is ErrorTag => typeof tag === "string" && Object.hasOwn(ERROR_TABLE, tag)

/** The table's row of any failure: by its `_tag`, else the internal row. */
export const errorRow = (error: unknown): ErrorRow =>
  typeof error === "object" && error !== null && "_tag" in error && isErrorTag(error._tag)
    ? ERROR_TABLE[error._tag]
    : INTERNAL_ERROR

/** The status and message a caller is answered with for any failure; an unknown one is an internal error. */
export const wireStatus = (error: unknown): WireStatus => {
  const row = errorRow(error)
  const own =
    typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
      ? error.message
      : INTERNAL_ERROR.publicMessage
  return { http: row.http, grpc: row.grpc, message: row.publicMessage ?? own ?? "internal error" }
}
