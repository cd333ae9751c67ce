/** svc-server: the REST + gRPC scoring server (seed 001). Wiring only. */
import { runService } from "../../modules/runtime/main.ts"
import { httpServiceLayer, livenessRoutes } from "../../modules/transport/http/server.ts"

runService({ executable: "svc-server" }, httpServiceLayer("svc-server", livenessRoutes))
