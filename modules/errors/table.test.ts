/**
 * The error table against the seeds' status rows (000 section 7, 001 section 7) and its own
 * promise: a reason marked log-only never reaches the caller's message.
 */
import { describe, expect, it } from "vitest"
import type { InvalidJobRequest, JobNotFound, NodeSessionNotLive } from "../jobs/errors.ts"
import { JobStoreFailure, JobStoreUnavailable } from "../jobs/errors.ts"
import type { Refusal } from "../policy/errors.ts"
import { Messages, PermissionDenied, Unauthenticated, Unavailable } from "../policy/errors.ts"
import { InvalidScoreRequest, type ScoreError, ScorerBusy, ScorerInternal } from "../scorer/index.ts"
import type { ScorerNotReady, TenantScoresBusy, UnsupportedMediaType } from "../scoring-api/errors.ts"
import { BodyTooLarge } from "../scoring-api/errors.ts"
import type { GrpcInputError } from "../transport/grpc/server.ts"
import { ERROR_TABLE, type ErrorRow, type ErrorTag, errorRow, INTERNAL_ERROR, wireStatus } from "./table.ts"

/** The tags of every error class that reaches a caller, from the classes themselves. */
type EdgeErrorTag =
  | Refusal["_tag"]
  | ScoreError["_tag"]
  | BodyTooLarge["_tag"]
  | ScorerNotReady["_tag"]
  | TenantScoresBusy["_tag"]
  | UnsupportedMediaType["_tag"]
  | JobNotFound["_tag"]
  | InvalidJobRequest["_tag"]
  | NodeSessionNotLive["_tag"]
  | JobStoreFailure["_tag"]
  | JobStoreUnavailable["_tag"]
  | GrpcInputError["_tag"]

// Checked by `npm run typecheck`: every class has a row, and every row a class.
const everyClassHasARow: Readonly<Record<EdgeErrorTag, ErrorRow>> = ERROR_TABLE
const everyRowHasAClass: ReadonlyArray<EdgeErrorTag> = Object.keys(ERROR_TABLE) as ReadonlyArray<ErrorTag>

describe("the error table", () => {
  it("has one row per error class that reaches a caller", () => {
    expect(Object.keys(everyClassHasARow).sort()).toEqual([...everyRowHasAClass].sort())
  })

  it("answers the controller's refusals as seed 000 section 7 says", () => {
    expect(wireStatus(Unauthenticated.because("expired", "exp 12 s ago"))).toEqual({
      grpc: "UNAUTHENTICATED",
      http: 401,
      message: Messages.invalidToken
    })
    expect(wireStatus(PermissionDenied.roleRequired(["svc:writer", "svc:admin"]))).toEqual({
      grpc: "PERMISSION_DENIED",
      http: 403,
      message: "role required: svc:writer, svc:admin"
    })
    expect(wireStatus(PermissionDenied.inputOutsideRoots("/etc/passwd"))).toEqual({
      grpc: "PERMISSION_DENIED",
      http: 403,
      message: `scoring input "/etc/passwd" is outside the tenant's scoring roots`
    })
    expect(wireStatus(Unavailable.tenantSetStale())).toEqual({
      grpc: "UNAVAILABLE",
      http: 503,
      message: "tenant configuration is stale"
    })
  })

  it("answers the scoring path's failures as seed 001 section 7 says", () => {
    expect(wireStatus(new InvalidScoreRequest({ message: "reference: is required" })).http).toBe(400)
    expect(wireStatus(new BodyTooLarge({ limit: 1024 * 1024 })).http).toBe(413)
    expect(wireStatus(new ScorerBusy({ limit: 2 })).http).toBe(429)
    expect(wireStatus(new ScorerInternal({ detail: "x" })).http).toBe(500)
  })

  it("keeps log-only reasons out of the caller's message", () => {
    const secret = "connection to 10.0.0.7:5432 refused"
    const carriers = [
      Unauthenticated.because("bad-signature", secret),
      new ScorerInternal({ detail: secret }),
      new JobStoreFailure({ operation: "insert", detail: secret })
    ]
    for (const error of carriers) {
      expect(errorRow(error).reasonLoggedOnly).toBe(true)
      expect(wireStatus(error).message).not.toContain(secret)
    }
    // Not log-only: the caller is told the store is down, to retry.
    expect(wireStatus(new JobStoreUnavailable({ operation: "insert", detail: "down" })).message).toContain("retry")
  })

  it("answers anything it does not list as a generic internal error", () => {
    for (const unknown of [new Error("a bug with private detail"), { _tag: "NotInTheTable" }, undefined, "text"]) {
      expect(wireStatus(unknown)).toEqual({ grpc: "INTERNAL", http: 500, message: "internal error" })
    }
    expect(errorRow({ _tag: "toString" })).toBe(INTERNAL_ERROR)
  })

  it("gives every row a client or server error status that agrees between the transports", () => {
    for (const row of Object.values(ERROR_TABLE)) {
      expect(row.http).toBeGreaterThanOrEqual(400)
      expect(row.grpc).not.toBe("OK")
      // A server-side failure over HTTP is one over gRPC too, and the other way round.
      expect(row.http >= 500).toBe(["INTERNAL", "UNAVAILABLE", "UNKNOWN", "DATA_LOSS"].includes(row.grpc))
    }
  })
})
