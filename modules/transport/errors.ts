/**
 * The one place where typed errors become wire statuses: an HTTP status with the JSON body
 * `{"error": "<message>"}`, and a gRPC status code with the same message. Policy refusals
 * (seed 000, section 7) carry their kind; scorer and job errors are listed here by tag.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { type ErrorKind, STATUS_OF_KIND } from "../policy/errors.ts"

export interface WireStatus {
  readonly http: number
  readonly grpc: GrpcStatus
  /** The caller-visible message (internal details stay in the log). */
  readonly message: string
}

/** Statuses of errors that are not policy refusals, by their _tag. */
export const STATUS_OF_TAG: Readonly<Record<string, { readonly http: number; readonly grpc: GrpcStatus }>> = {
  InvalidScoreRequest: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  UnknownModel: { http: 400, grpc: GrpcStatus.NOT_FOUND },
  UnreadableInput: { http: 400, grpc: GrpcStatus.NOT_FOUND },
  InvalidGeometry: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  InputNotFound: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  UnsupportedInput: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  ScoreTooLarge: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  ScoreMemoryBusy: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  TenantScoresBusy: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  UnsupportedMediaType: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT },
  ScorerBusy: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  BodyTooLarge: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  JobNotFound: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  InvalidJobRequest: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  // The node's session expired or predates a controller restart: the node registers again.
  NodeSessionNotLive: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  ScorerInternal: { http: 500, grpc: GrpcStatus.INTERNAL },
  // PostgreSQL unreachable: nothing was acknowledged, the caller retries (a node fails over).
  JobStoreUnavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  ScorerNotReady: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
  GrpcInputError: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT }
}

const internal: WireStatus = { http: 500, grpc: GrpcStatus.INTERNAL, message: "internal error" }

const hasKind = (error: object): error is { readonly kind: ErrorKind } =>
  "kind" in error && typeof error.kind === "string" && error.kind in STATUS_OF_KIND

const messageOf = (error: object): string =>
  "message" in error && typeof error.message === "string" ? error.message : internal.message

/** Maps any failure to its wire status; an unknown failure is an internal error. */
export const wireStatus = (error: unknown): WireStatus => {
  if (typeof error !== "object" || error === null) return internal
  if (hasKind(error)) {
    const entry = STATUS_OF_KIND[error.kind]
    return { http: entry.http, grpc: entry.grpcCode as GrpcStatus, message: messageOf(error) }
  }
  const tag = "_tag" in error && typeof error._tag === "string" ? error._tag : ""
  const entry = STATUS_OF_TAG[tag]
  return entry ? { ...entry, message: messageOf(error) } : internal
}
