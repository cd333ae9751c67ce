/** svc-operator: SvcJob resources as controller jobs, SvcNode status from node sessions (issue 21). Wiring only. */
import { operatorLayer } from "../../modules/operator/index.ts"
import { runService } from "../../modules/runtime/main.ts"

runService({ executable: "svc-operator" }, operatorLayer("svc-operator"))
