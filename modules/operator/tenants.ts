/**
 * Which tenant acts for which namespace: the operator submits a namespace's SvcJobs with that
 * namespace's own tenant token only (seed 000 5.5: every job is scoped to the caller's tenant;
 * Kubernetes rights in a namespace must not lend another tenant's). Pure, so it is tested alone.
 */
import { Either, Option } from "effect"
import type { OperatorConfig } from "./config.ts"

export interface TenantPlan {
  /** Namespaces whose SvcJobs are watched. */
  readonly watched: ReadonlyArray<string>
  /**
   * Namespace → its tenant's token file (None: no token, for an auth-disabled controller). A
   * watched namespace absent here has no tenant: its SvcJobs are refused, never submitted.
   */
  readonly tokens: ReadonlyMap<string, Option.Option<string>>
}

/**
 * - SVC_OPERATOR_TENANT_TOKENS: each listed namespace acts with its own token; namespaces of
 *   SVC_OPERATOR_NAMESPACES without an entry are watched and refused.
 * - SVC_CONTROLLER_TOKEN_FILE: one shared token, only for an operator watching one namespace.
 * - Neither: no token at all (a controller in disabled mode); every watched namespace acts.
 */
export const planTenants = (
  config: Pick<OperatorConfig, "tokenFile" | "tenantTokens" | "namespaces">,
  ownNamespace: string
): Either.Either<TenantPlan, string> => {
  const listed = Option.getOrElse(config.namespaces, (): ReadonlyArray<string> => [])
  if (Option.isSome(config.tenantTokens)) {
    if (Option.isSome(config.tokenFile))
      return Either.left(
        "SVC_CONTROLLER_TOKEN_FILE and SVC_OPERATOR_TENANT_TOKENS: give one or the other (one token per namespace)"
      )
    const tokens = new Map([...config.tenantTokens.value].map(([namespace, file]) => [namespace, Option.some(file)]))
    return Either.right({ watched: [...new Set([...tokens.keys(), ...listed])], tokens })
  }
  const watched = listed.length > 0 ? [...new Set(listed)] : [ownNamespace]
  if (Option.isSome(config.tokenFile) && watched.length > 1)
    return Either.left(
      `SVC_CONTROLLER_TOKEN_FILE is one tenant's token: an operator watching several namespaces (${watched.join(", ")}) needs SVC_OPERATOR_TENANT_TOKENS, one token per namespace`
    )
  return Either.right({ watched, tokens: new Map(watched.map((namespace) => [namespace, config.tokenFile])) })
}
