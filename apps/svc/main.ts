/** svc: the command-line client (score locally or on a server, jobs on a controller, models). Wiring only. */
import { runSvc } from "../../modules/cli/main.ts"

runSvc()
