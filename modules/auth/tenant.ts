/**
 * The `SvcTenant` resource (seed 2.4): strict decoding with `effect/Schema`, defaults,
 * and the validity rules. The CRD in `schemas/svctenant.crd.yaml` mirrors these.
 */
import { Either, ParseResult, Schema } from "effect"
import { isKnownRole, type Role } from "../policy/roles.ts"
import { MAX_ROOTS_PER_TENANT, parseRoot, RootSet } from "../policy/scoring-roots.ts"
import { DEFAULT_ROLES_CLAIM, DEFAULT_TENANT_CLAIM, type ProviderSettings } from "./config.ts"
import { issuerProblem, jwksEndpointProblem } from "./urls.ts"

/** API group of the tenant resource: documents carry `apiVersion: svc.dev/v1`. */
export const TENANT_API_GROUP = "svc.dev"
export const TENANT_API_VERSION = `${TENANT_API_GROUP}/v1`
export const TENANT_KIND = "SvcTenant"
export const TENANT_LIST_KIND = "SvcTenantList"
export const TENANT_PLURAL = "svctenants"

/** DNS-label-like: lower-case alphanumerics and inner hyphens, 1..63 characters. */
export const TENANT_ID_PATTERN = "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
const TENANT_ID = new RegExp(TENANT_ID_PATTERN)

export const DEFAULT_ROLE: Role = "svc:reader"
export const DEFAULT_ALLOWED_ROLES: ReadonlyArray<Role> = ["svc:reader", "svc:writer"]

const OidcSpec = Schema.Struct({
  issuer: Schema.String,
  jwksEndpoint: Schema.String,
  audience: Schema.optional(Schema.String),
  tenantClaim: Schema.optionalWith(Schema.String, { default: () => DEFAULT_TENANT_CLAIM }),
  rolesClaim: Schema.optionalWith(Schema.String, { default: () => DEFAULT_ROLES_CLAIM })
})

const RbacSpec = Schema.Struct({
  defaultRole: Schema.optionalWith(Schema.String, { default: () => DEFAULT_ROLE }),
  allowedRoles: Schema.optionalWith(Schema.Array(Schema.String), { default: () => DEFAULT_ALLOWED_ROLES })
})

const ScoringSpec = Schema.Struct({
  roots: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
})

export const TenantSpec = Schema.Struct({
  tenantId: Schema.String,
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  oidc: OidcSpec,
  rbac: Schema.optionalWith(RbacSpec, {
    default: () => ({ defaultRole: DEFAULT_ROLE, allowedRoles: DEFAULT_ALLOWED_ROLES })
  }),
  scoring: Schema.optionalWith(ScoringSpec, { default: () => ({ roots: [] }) })
})

// Only `spec` is strict; `metadata` and `status` may carry whatever the orchestrator adds.
const Envelope = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  metadata: Schema.optionalWith(Schema.Struct({ name: Schema.optional(Schema.String) }), { default: () => ({}) }),
  spec: Schema.optional(Schema.Unknown),
  items: Schema.optional(Schema.Array(Schema.Unknown))
})

/** A valid tenant, defaults applied. */
export interface Tenant {
  readonly name: string
  readonly tenantId: string
  readonly enabled: boolean
  readonly provider: ProviderSettings
  readonly defaultRole: Role
  readonly allowedRoles: ReadonlyArray<Role>
  readonly roots: RootSet
}

/** A document or tenant the controller refuses, with every reason. */
export interface TenantRefusal {
  readonly name: string
  readonly reasons: ReadonlyArray<string>
}

const formatParseError = (prefix: string, error: ParseResult.ParseError): ReadonlyArray<string> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const path = [prefix, ...issue.path.map(String)].join(".")
    return `${path}: ${issue.message}`
  })

const tenantRules = (spec: typeof TenantSpec.Type): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (!TENANT_ID.test(spec.tenantId))
    problems.push(`spec.tenantId "${spec.tenantId}" does not match ${TENANT_ID_PATTERN}`)
  const issuer = issuerProblem(spec.oidc.issuer)
  if (issuer !== undefined) problems.push(`spec.oidc.issuer ${issuer}, got "${spec.oidc.issuer}"`)
  const jwks = jwksEndpointProblem(spec.oidc.jwksEndpoint)
  if (jwks !== undefined) problems.push(`spec.oidc.jwksEndpoint ${jwks}, got "${spec.oidc.jwksEndpoint}"`)
  if (spec.oidc.tenantClaim === "") problems.push("spec.oidc.tenantClaim must not be empty")
  if (spec.oidc.rolesClaim === "") problems.push("spec.oidc.rolesClaim must not be empty")
  const { allowedRoles, defaultRole } = spec.rbac
  if (allowedRoles.length === 0) problems.push("spec.rbac.allowedRoles must not be empty")
  for (const role of allowedRoles)
    if (!isKnownRole(role)) problems.push(`spec.rbac.allowedRoles: unknown role "${role}"`)
  if (!isKnownRole(defaultRole)) problems.push(`spec.rbac.defaultRole: unknown role "${defaultRole}"`)
  else if (defaultRole === "svc:node") problems.push(`spec.rbac.defaultRole must not be "svc:node"`)
  else if (!allowedRoles.includes(defaultRole))
    problems.push(`spec.rbac.defaultRole "${defaultRole}" is not in spec.rbac.allowedRoles`)
  const { roots } = spec.scoring
  if (roots.length > MAX_ROOTS_PER_TENANT)
    problems.push(`spec.scoring.roots has ${roots.length} entries, at most ${MAX_ROOTS_PER_TENANT} allowed`)
  for (const root of roots) {
    Either.mapLeft(parseRoot(root), (why) => problems.push(`spec.scoring.roots: "${root}" ${why}`))
  }
  return problems
}

/** Decodes one `SvcTenant` document and applies the rules of seed 2.4. */
export const decodeTenant = (value: unknown, fallbackName: string): Either.Either<Tenant, TenantRefusal> => {
  const envelope = Schema.decodeUnknownEither(Envelope)(value)
  if (Either.isLeft(envelope))
    return Either.left({ name: fallbackName, reasons: formatParseError("document", envelope.left) })
  const name = envelope.right.metadata.name ?? fallbackName
  const { apiVersion, kind } = envelope.right
  if (apiVersion !== TENANT_API_VERSION || kind !== TENANT_KIND) {
    return Either.left({
      name,
      reasons: [`expected apiVersion ${TENANT_API_VERSION} and kind ${TENANT_KIND}, got ${apiVersion} ${kind}`]
    })
  }
  const spec = Schema.decodeUnknownEither(TenantSpec, { onExcessProperty: "error", errors: "all" })(envelope.right.spec)
  if (Either.isLeft(spec)) return Either.left({ name, reasons: formatParseError("spec", spec.left) })
  const problems = tenantRules(spec.right)
  if (problems.length > 0) return Either.left({ name, reasons: problems })
  const { tenantId, enabled, oidc, rbac, scoring } = spec.right
  return Either.right({
    name,
    tenantId,
    enabled,
    provider: {
      issuer: oidc.issuer,
      jwksEndpoint: oidc.jwksEndpoint,
      audience: oidc.audience,
      tenantClaim: oidc.tenantClaim,
      rolesClaim: oidc.rolesClaim
    },
    defaultRole: rbac.defaultRole as Role,
    allowedRoles: rbac.allowedRoles.filter(isKnownRole),
    roots: RootSet.fromValidTexts(scoring.roots)
  })
}

/**
 * The tenant documents inside one file document: itself, or the items of a `List` /
 * `SvcTenantList` (lists are accepted from files only; the orchestrator source
 * returns items).
 */
export const expandListDocument = (
  value: unknown,
  origin: string
): Either.Either<ReadonlyArray<unknown>, TenantRefusal> => {
  const envelope = Schema.decodeUnknownEither(Envelope)(value)
  if (Either.isLeft(envelope))
    return Either.left({ name: origin, reasons: formatParseError("document", envelope.left) })
  const { apiVersion, kind, items } = envelope.right
  if (kind !== "List" && kind !== TENANT_LIST_KIND) return Either.right([value])
  const listVersionOk =
    kind === "List" ? apiVersion === "v1" || apiVersion === TENANT_API_VERSION : apiVersion === TENANT_API_VERSION
  if (!listVersionOk)
    return Either.left({
      name: origin,
      reasons: [`a ${kind} must have apiVersion ${kind === "List" ? "v1" : TENANT_API_VERSION}, got ${apiVersion}`]
    })
  return Either.right(items ?? [])
}

/** The outcome of validating a whole set: the valid tenants and every refusal. */
export interface TenantSetValidation {
  readonly tenants: ReadonlyArray<Tenant>
  readonly refusals: ReadonlyArray<TenantRefusal>
}

/** Validates documents one by one, then refuses every tenant whose `tenantId` is not unique. */
export const validateTenantSet = (
  documents: ReadonlyArray<{ readonly value: unknown; readonly origin: string }>,
  expandLists: boolean
): TenantSetValidation => {
  const candidates: Array<Tenant> = []
  const refusals: Array<TenantRefusal> = []
  for (const { value, origin } of documents) {
    const expanded = expandLists ? expandListDocument(value, origin) : Either.right([value])
    if (Either.isLeft(expanded)) {
      refusals.push(expanded.left)
      continue
    }
    expanded.right.forEach((item, index) => {
      const decoded = decodeTenant(item, expanded.right.length > 1 ? `${origin} item ${index}` : origin)
      if (Either.isLeft(decoded)) refusals.push(decoded.left)
      else candidates.push(decoded.right)
    })
  }
  const owners = new Map<string, Array<string>>()
  for (const tenant of candidates) owners.set(tenant.tenantId, [...(owners.get(tenant.tenantId) ?? []), tenant.name])
  const tenants = candidates.filter((tenant) => {
    const names = owners.get(tenant.tenantId) ?? []
    if (names.length === 1) return true
    refusals.push({
      name: tenant.name,
      reasons: [`spec.tenantId "${tenant.tenantId}" is used by several tenants: ${names.join(", ")}`]
    })
    return false
  })
  return { tenants, refusals }
}
