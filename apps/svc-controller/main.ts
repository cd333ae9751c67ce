/** svc-controller: the multi-tenant authentication gateway and job service (seed 000). Wiring only. */
import { runService } from "../../modules/runtime/main.ts"
import { httpServiceLayer, livenessRoutes } from "../../modules/transport/http/server.ts"

runService({ executable: "svc-controller" }, httpServiceLayer("svc-controller", livenessRoutes))
