/** svc-node: the compute node: registers with the controller, pulls work, scores, reports. Wiring only. */
import { runService } from "../../modules/runtime/main.ts"
import { httpServiceLayer, livenessRoutes } from "../../modules/transport/http/server.ts"

runService({ executable: "svc-node" }, httpServiceLayer("svc-node", livenessRoutes))
