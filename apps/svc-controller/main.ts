/** svc-controller: the multi-tenant authentication gateway and job service (seed 000). Wiring only. */
import { controllerLayer } from "../../modules/controller/index.ts"
import { runService } from "../../modules/runtime/main.ts"

runService({ executable: "svc-controller" }, controllerLayer("svc-controller"))
