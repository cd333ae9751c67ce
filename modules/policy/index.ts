/** Public API of the policy module: role table, RBAC, scoring roots, node-report rule, contract refusals. */
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
export { authorize } from "./rbac.ts"
export {
  Messages,
  PermissionDenied,
  Unauthenticated,
  Unavailable,
  type Refusal,
  type RefusalReason,
  type UnauthenticatedReason
} from "./errors.ts"
export {
  MAX_ROOTS_PER_TENANT,
  parseRoot,
  RootSet,
  rootsForTenant,
  splitRootList
} from "./scoring-roots.ts"
export { decideReport } from "./node-reports.ts"
