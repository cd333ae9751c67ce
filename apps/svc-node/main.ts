/** svc-node: the compute node: registers with the controller, pulls work, scores, reports. Wiring only. */
import { Layer } from "effect"
import { NodeAgent } from "../../modules/node/agent.ts"
import { nodeRoutes } from "../../modules/node/http.ts"
import { runService } from "../../modules/runtime/main.ts"
import { Scorer } from "../../modules/scorer/index.ts"
import { httpServiceLayer } from "../../modules/transport/http/server.ts"

const AgentLive = NodeAgent.Default.pipe(Layer.provide(Scorer.Default))

runService({ executable: "svc-node" }, httpServiceLayer("svc-node", nodeRoutes).pipe(Layer.provide(AgentLive)))
