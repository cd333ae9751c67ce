/** Public API of the policy module: role table, RBAC, tenant scoping, scoring roots, contract errors. */
export {
  GRPC_PACKAGE,
  GrpcMethods,
  HTTP_MODELS_ROUTE,
  HTTP_SCORE_ROUTE,
  isKnownRole,
  KNOWN_ROLES,
  ROLE_TABLE,
  unlistedMethods,
  type Role
} from "./roles.ts"
export type { Principal } from "./principal.ts"
export { authorize, Rbac, requireSameTenant } from "./rbac.ts"
export {
  Messages,
  PermissionDenied,
  Unauthenticated,
  Unavailable,
  type PermissionDeniedReason,
  type Refusal,
  type RefusalReason,
  type UnauthenticatedReason
} from "./errors.ts"
export {
  MAX_ROOTS_PER_TENANT,
  parseRoot,
  RootSet,
  rootsForTenant,
  splitRootList,
  TENANT_PLACEHOLDER,
  type AdmittedInput,
  type ScoringRoot
} from "./scoring-roots.ts"
export { decideReport, type JobState, type ReportDecision, type ReportedJob, type Reporter } from "./node-reports.ts"
