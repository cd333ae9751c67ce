/**
 * Auth settings from the SVC_* environment (seed 5.3, 5.7, 5.8), read with Effect
 * `Config` so tests can supply a `ConfigProvider.fromMap`. Every invalid combination
 * stops start-up with an `AuthStartupError` naming the variable(s) and the rule.
 */
import { Config, Data, Effect, Option } from "effect"
import { invalidRootTemplate, splitRootList } from "../policy/scoring-roots.ts"
import { parseGoDuration } from "./duration.ts"
import { issuerProblem, jwksEndpointProblem } from "./urls.ts"

/** Start-up refused: the message names the variable(s) or tenant(s) and the rule broken. */
export class AuthStartupError extends Data.TaggedError("AuthStartupError")<{ readonly message: string }> {}

export const DEFAULT_TENANT_CLAIM = "tid"
export const DEFAULT_ROLES_CLAIM = "svc_roles"
export const DEFAULT_REFRESH_MILLIS = 30_000
export const MIN_REFRESH_MILLIS = 1_000
export const MAX_REFRESH_MILLIS = 3_600_000

/** How one OIDC provider's tokens are verified and read. */
export interface ProviderSettings {
  readonly jwksEndpoint: string
  readonly issuer: string
  readonly audience: string | undefined
  readonly tenantClaim: string
  readonly rolesClaim: string
}

export type TenantSourceSetting =
  | { readonly _tag: "File"; readonly path: string }
  /** `namespace` undefined: the controller's own namespace (read from the service-account files). */
  | { readonly _tag: "Orchestrator"; readonly namespace: string | undefined }

export type AuthMode =
  | { readonly _tag: "Disabled"; readonly scoringRoots: ReadonlyArray<string> }
  | {
      readonly _tag: "SingleProvider"
      readonly provider: ProviderSettings
      readonly scoringRoots: ReadonlyArray<string>
    }
  | { readonly _tag: "Registry"; readonly source: TenantSourceSetting; readonly refreshMillis: number }

/** The raw variables; `undefined` when unset or empty. */
export interface AuthEnvironment {
  readonly SVC_JWKS_ENDPOINT: string | undefined
  readonly SVC_AUTH_ISSUER: string | undefined
  readonly SVC_AUTH_AUDIENCE: string | undefined
  readonly SVC_AUTH_TENANT_CLAIM: string | undefined
  readonly SVC_AUTH_ROLES_CLAIM: string | undefined
  readonly SVC_AUTH_DISABLED: string | undefined
  readonly SVC_SCORING_ROOTS: string | undefined
  readonly SVC_AUTH_TENANTS_SOURCE: string | undefined
  readonly SVC_AUTH_TENANTS_FILE: string | undefined
  readonly SVC_AUTH_TENANTS_NAMESPACE: string | undefined
  readonly SVC_AUTH_TENANTS_REFRESH: string | undefined
}

/** Provider variables that belong to single-provider mode only (seed 5.8). */
const SINGLE_PROVIDER_VARIABLES = [
  "SVC_JWKS_ENDPOINT",
  "SVC_AUTH_ISSUER",
  "SVC_AUTH_AUDIENCE",
  "SVC_AUTH_TENANT_CLAIM",
  "SVC_AUTH_ROLES_CLAIM"
] as const

// An empty variable counts as unset: orchestrators often render unset values as "".
const optionalVariable = (name: string): Config.Config<string | undefined> =>
  Config.option(Config.string(name)).pipe(
    Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text.trim() !== "")))
  )

export const authEnvironment: Config.Config<AuthEnvironment> = Config.all({
  SVC_JWKS_ENDPOINT: optionalVariable("SVC_JWKS_ENDPOINT"),
  SVC_AUTH_ISSUER: optionalVariable("SVC_AUTH_ISSUER"),
  SVC_AUTH_AUDIENCE: optionalVariable("SVC_AUTH_AUDIENCE"),
  SVC_AUTH_TENANT_CLAIM: optionalVariable("SVC_AUTH_TENANT_CLAIM"),
  SVC_AUTH_ROLES_CLAIM: optionalVariable("SVC_AUTH_ROLES_CLAIM"),
  SVC_AUTH_DISABLED: optionalVariable("SVC_AUTH_DISABLED"),
  SVC_SCORING_ROOTS: optionalVariable("SVC_SCORING_ROOTS"),
  SVC_AUTH_TENANTS_SOURCE: optionalVariable("SVC_AUTH_TENANTS_SOURCE"),
  SVC_AUTH_TENANTS_FILE: optionalVariable("SVC_AUTH_TENANTS_FILE"),
  SVC_AUTH_TENANTS_NAMESPACE: optionalVariable("SVC_AUTH_TENANTS_NAMESPACE"),
  SVC_AUTH_TENANTS_REFRESH: optionalVariable("SVC_AUTH_TENANTS_REFRESH")
})

const parseDisabled = (text: string | undefined): boolean | string => {
  if (text === undefined) return false
  // The same spellings as the other SVC_* flags (modules/config/env.ts).
  const lower = text.trim().toLowerCase()
  if (["true", "1", "yes", "on"].includes(lower)) return true
  if (["false", "0", "no", "off"].includes(lower)) return false
  return `SVC_AUTH_DISABLED must be "true" or "false", got "${text}"`
}

const scoringRootProblems = (text: string | undefined): ReadonlyArray<string> =>
  text === undefined
    ? []
    : splitRootList(text).flatMap((template) => {
        const problem = invalidRootTemplate(template)
        return problem === undefined ? [] : [`SVC_SCORING_ROOTS: ${problem}`]
      })

const registryMode = (env: AuthEnvironment, disabled: boolean, source: string): AuthMode | ReadonlyArray<string> => {
  const problems: Array<string> = []
  const registry = "the tenant registry (SVC_AUTH_TENANTS_SOURCE)"
  if (source !== "file" && source !== "orchestrator") {
    problems.push(`SVC_AUTH_TENANTS_SOURCE must be "file" or "orchestrator", got "${source}"`)
  }
  if (env.SVC_AUTH_TENANTS_FILE !== undefined && source !== "file") {
    problems.push(`SVC_AUTH_TENANTS_FILE is set but SVC_AUTH_TENANTS_SOURCE is not "file"`)
  }
  if (source === "file" && env.SVC_AUTH_TENANTS_FILE === undefined) {
    problems.push(`SVC_AUTH_TENANTS_SOURCE=file requires SVC_AUTH_TENANTS_FILE`)
  }
  if (env.SVC_AUTH_TENANTS_NAMESPACE !== undefined && source !== "orchestrator") {
    problems.push(`SVC_AUTH_TENANTS_NAMESPACE is set but SVC_AUTH_TENANTS_SOURCE is not "orchestrator"`)
  }
  const refreshText = env.SVC_AUTH_TENANTS_REFRESH
  const refreshMillis = refreshText === undefined ? DEFAULT_REFRESH_MILLIS : parseGoDuration(refreshText.trim())
  if (refreshMillis === undefined || refreshMillis < MIN_REFRESH_MILLIS || refreshMillis > MAX_REFRESH_MILLIS) {
    problems.push(`SVC_AUTH_TENANTS_REFRESH must be a duration between 1s and 1h, got "${refreshText}"`)
  }
  if (disabled) problems.push(`SVC_AUTH_DISABLED=true cannot be combined with ${registry}`)
  const providerVariables = SINGLE_PROVIDER_VARIABLES.filter((name) => env[name] !== undefined)
  if (providerVariables.length > 0) {
    problems.push(
      `${providerVariables.join(", ")} cannot be combined with ${registry}: each tenant names its own provider`
    )
  }
  if (env.SVC_SCORING_ROOTS !== undefined) {
    problems.push(
      `SVC_SCORING_ROOTS cannot be combined with ${registry}: roots come from each tenant's spec.scoring.roots`
    )
  }
  if (problems.length > 0 || refreshMillis === undefined) return problems
  const sourceSetting: TenantSourceSetting =
    source === "file"
      ? { _tag: "File", path: env.SVC_AUTH_TENANTS_FILE ?? "" }
      : { _tag: "Orchestrator", namespace: env.SVC_AUTH_TENANTS_NAMESPACE }
  return { _tag: "Registry", source: sourceSetting, refreshMillis }
}

const singleProviderMode = (env: AuthEnvironment): AuthMode | ReadonlyArray<string> => {
  const problems: Array<string> = [...scoringRootProblems(env.SVC_SCORING_ROOTS)]
  const orRegistry = "unless SVC_AUTH_DISABLED=true or SVC_AUTH_TENANTS_SOURCE is set"
  const { SVC_JWKS_ENDPOINT: jwksEndpoint, SVC_AUTH_ISSUER: issuer } = env
  if (jwksEndpoint === undefined) problems.push(`SVC_JWKS_ENDPOINT is required ${orRegistry}`)
  else {
    const problem = jwksEndpointProblem(jwksEndpoint)
    if (problem !== undefined) problems.push(`SVC_JWKS_ENDPOINT ${problem}, got "${jwksEndpoint}"`)
  }
  if (issuer === undefined) problems.push(`SVC_AUTH_ISSUER is required ${orRegistry}`)
  else {
    const problem = issuerProblem(issuer)
    if (problem !== undefined) problems.push(`SVC_AUTH_ISSUER ${problem}, got "${issuer}"`)
  }
  if (problems.length > 0 || jwksEndpoint === undefined || issuer === undefined) return problems
  return {
    _tag: "SingleProvider",
    provider: {
      jwksEndpoint,
      issuer,
      audience: env.SVC_AUTH_AUDIENCE,
      tenantClaim: env.SVC_AUTH_TENANT_CLAIM ?? DEFAULT_TENANT_CLAIM,
      rolesClaim: env.SVC_AUTH_ROLES_CLAIM ?? DEFAULT_ROLES_CLAIM
    },
    scoringRoots: splitRootList(env.SVC_SCORING_ROOTS ?? "")
  }
}

/** The mode the variables select, or every rule they break. */
export const decideAuthMode = (env: AuthEnvironment): Effect.Effect<AuthMode, AuthStartupError> => {
  const disabled = parseDisabled(env.SVC_AUTH_DISABLED)
  const source = env.SVC_AUTH_TENANTS_SOURCE?.trim()
  const tenantVariables = (
    ["SVC_AUTH_TENANTS_FILE", "SVC_AUTH_TENANTS_NAMESPACE", "SVC_AUTH_TENANTS_REFRESH"] as const
  ).filter((name) => env[name] !== undefined)
  let decided: AuthMode | ReadonlyArray<string>
  if (typeof disabled === "string") decided = [disabled]
  else if (source !== undefined) decided = registryMode(env, disabled, source)
  else if (tenantVariables.length > 0) decided = [`${tenantVariables.join(", ")} set without SVC_AUTH_TENANTS_SOURCE`]
  else if (disabled) {
    const problems = scoringRootProblems(env.SVC_SCORING_ROOTS)
    decided =
      problems.length > 0 ? problems : { _tag: "Disabled", scoringRoots: splitRootList(env.SVC_SCORING_ROOTS ?? "") }
  } else decided = singleProviderMode(env)
  return "_tag" in decided
    ? Effect.succeed(decided)
    : Effect.fail(new AuthStartupError({ message: `auth configuration refused: ${decided.join("; ")}` }))
}

/** Reads the SVC_* auth variables from the current `ConfigProvider` and decides the mode. */
export const loadAuthMode: Effect.Effect<AuthMode, AuthStartupError> = authEnvironment.pipe(
  Effect.mapError((error) => new AuthStartupError({ message: `auth configuration refused: ${String(error)}` })),
  Effect.flatMap(decideAuthMode)
)
