/**
 * The refusals of the controller contract (seed 000, section 7) and their fixed messages. Each
 * refusal's tag answers one gRPC and HTTP status, decided in the error table (modules/errors).
 */
import { Data } from "effect"

export const Messages = {
  invalidToken: "invalid or missing token",
  roleRequired: (roles: ReadonlyArray<string>) => `role required: ${roles.join(", ")}`,
  otherTenant: "resource belongs to another tenant",
  inputOutsideRoots: (input: string) => `scoring input "${input}" is outside the tenant's scoring roots`,
  tenantSetStale: "tenant configuration is stale",
  jobNotAssigned: (jobId: string, nodeId: string) => `job "${jobId}" is not assigned to node "${nodeId}"`,
  // The two below have no fixed text in the seed; they never name another tenant.
  tenantSuspended: "tenant is suspended",
  methodNotListed: (method: string) => `method "${method}" is not permitted`
} as const

/**
 * Why a token was refused. Only logged and counted: the caller always sees the
 * fixed `invalid or missing token` (seed 5.8.9).
 */
export type UnauthenticatedReason =
  | "missing-token"
  | "malformed-token"
  | "unsupported-algorithm"
  | "unknown-key"
  | "bad-signature"
  | "expired"
  | "not-yet-valid"
  | "wrong-issuer"
  | "wrong-audience"
  | "missing-tenant-claim"
  | "keys-unavailable"
  | "unknown-issuer"
  | "no-matching-tenant"
  | "ambiguous-tenant"

export class Unauthenticated extends Data.TaggedError("Unauthenticated")<{
  readonly reason: UnauthenticatedReason
  /** Extra text for the log line; never sent to the caller. */
  readonly detail: string
  readonly message: string
}> {
  static because(reason: UnauthenticatedReason, detail: string): Unauthenticated {
    return new Unauthenticated({ reason, detail, message: Messages.invalidToken })
  }
}

export type PermissionDeniedReason =
  | "role-required"
  | "method-not-listed"
  | "other-tenant"
  | "input-outside-roots"
  | "tenant-suspended"
  | "job-not-assigned"

export class PermissionDenied extends Data.TaggedError("PermissionDenied")<{
  readonly reason: PermissionDeniedReason
  readonly message: string
}> {
  static roleRequired(roles: ReadonlyArray<string>): PermissionDenied {
    return new PermissionDenied({ reason: "role-required", message: Messages.roleRequired(roles) })
  }
  static methodNotListed(method: string): PermissionDenied {
    return new PermissionDenied({ reason: "method-not-listed", message: Messages.methodNotListed(method) })
  }
  static otherTenant(): PermissionDenied {
    return new PermissionDenied({ reason: "other-tenant", message: Messages.otherTenant })
  }
  static inputOutsideRoots(input: string): PermissionDenied {
    return new PermissionDenied({ reason: "input-outside-roots", message: Messages.inputOutsideRoots(input) })
  }
  static tenantSuspended(): PermissionDenied {
    return new PermissionDenied({ reason: "tenant-suspended", message: Messages.tenantSuspended })
  }
  static jobNotAssigned(jobId: string, nodeId: string): PermissionDenied {
    return new PermissionDenied({ reason: "job-not-assigned", message: Messages.jobNotAssigned(jobId, nodeId) })
  }
}

export type UnavailableReason = "tenant-set-stale"

export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly reason: UnavailableReason
  readonly message: string
}> {
  static tenantSetStale(): Unavailable {
    return new Unavailable({ reason: "tenant-set-stale", message: Messages.tenantSetStale })
  }
}

/** Every refusal the auth and policy modules hand to the transport. */
export type Refusal = Unauthenticated | PermissionDenied | Unavailable

/** Why a request was refused, for logs and the refusal counter. */
export type RefusalReason = Refusal["reason"]
