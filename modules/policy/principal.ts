import type { Role } from "./roles.ts"

/** The authenticated caller of one request: what every policy decision reads. */
export interface Principal {
  /** Tenant identifier from the token, compared exactly (case and whitespace count). */
  readonly tenantId: string
  readonly roles: ReadonlyArray<Role>
  /** The token's `sub`, for audit logs only. */
  readonly subject: string | undefined
}
