import { Effect } from "effect"
import { PermissionDenied } from "./errors.ts"
import type { Principal } from "./principal.ts"
import { ROLE_TABLE } from "./roles.ts"

/**
 * The decision of seed 5.4 for one call: allowed when the principal holds at least
 * one role the table lists for the method. A method absent from the table is
 * refused for every caller, including disabled mode's synthetic admin.
 */
export const authorize = (principal: Principal, method: string): Effect.Effect<void, PermissionDenied> => {
  const allowed = ROLE_TABLE.get(method)
  if (allowed === undefined) return Effect.fail(PermissionDenied.methodNotListed(method))
  return principal.roles.some((role) => allowed.includes(role))
    ? Effect.void
    : Effect.fail(PermissionDenied.roleRequired(allowed))
}
