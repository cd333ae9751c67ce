/** Public API of the auth module: the layer the controller provides and the services it reads. */
export {
  Authenticator,
  authLayer,
  authLayerForMode,
  AuthStatus,
  DISABLED_MODE_PRINCIPAL,
  ScoringRoots,
  type AuthLayerOptions,
  type Readiness
} from "./authenticator.ts"
export {
  AuthStartupError,
  loadAuthMode,
  type AuthMode,
  type ProviderSettings,
  type TenantSourceSetting
} from "./config.ts"
export { AuthCounters, AuthMetrics, type JwksFetchOutcome } from "./metrics.ts"
export type { JwksCacheState, JwksStatus } from "./jwks.ts"
export type { TenantSetStatus } from "./registry.ts"
export {
  TENANT_API_GROUP,
  TENANT_API_VERSION,
  TENANT_ID_PATTERN,
  TENANT_KIND,
  TENANT_LIST_KIND,
  TENANT_PLURAL
} from "./tenant.ts"
export type { OrchestratorAccess } from "./tenant-source.ts"
