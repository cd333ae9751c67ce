/** Public API of the error table: every error tag → gRPC status, HTTP status, public message. */
export {
  ERROR_TABLE,
  type ErrorRow,
  type ErrorTag,
  errorRow,
  GRPC_CODES,
  type GrpcCodeName,
  grpcCodeName,
  INTERNAL_ERROR,
  type WireStatus,
  wireStatus
} from "./table.ts"
