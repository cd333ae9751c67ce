/** The error table names gRPC codes itself; they must be grpc-js's numbers. */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { describe, expect, it } from "vitest"
import { GRPC_CODES, grpcCodeName } from "../errors/index.ts"
import { PermissionDenied } from "../policy/errors.ts"
import { grpcStatusOf } from "./errors.ts"

describe("grpcStatusOf", () => {
  it("uses grpc-js's code for every name of the table", () => {
    for (const [name, code] of Object.entries(GRPC_CODES)) {
      expect(GrpcStatus[name as keyof typeof GrpcStatus]).toBe(code)
      expect(grpcCodeName(code)).toBe(name)
    }
    expect(grpcStatusOf(PermissionDenied.otherTenant())).toEqual({
      code: GrpcStatus.PERMISSION_DENIED,
      message: "resource belongs to another tenant"
    })
  })
})
