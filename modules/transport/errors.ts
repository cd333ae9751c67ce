/**
 * Typed failures → grpc-js statuses. What each failure answers is decided once, in the error
 * table (modules/errors/table.ts); this file only turns its gRPC code name into grpc-js's enum.
 * HTTP answers use `wireStatus(error).http` with the body `{"error": "<message>"}`.
 */
import type { status as GrpcStatus } from "@grpc/grpc-js"
import { GRPC_CODES, wireStatus } from "../errors/index.ts"

export interface GrpcWireStatus {
  readonly code: GrpcStatus
  /** The caller-visible message (internal details stay in the log). */
  readonly message: string
}

/** The gRPC status of any failure; an unknown failure is INTERNAL with a generic message. */
export const grpcStatusOf = (error: unknown): GrpcWireStatus => {
  const wire = wireStatus(error)
  return { code: GRPC_CODES[wire.grpc] as GrpcStatus, message: wire.message }
}
