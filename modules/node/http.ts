/** svc-node's probes: live while the process runs, ready while it holds a controller session. */
import { HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { jsonResponse, livenessRoutes } from "../transport/http/server.ts"
import { NodeAgent } from "./agent.ts"

const readiness = Effect.flatMap(NodeAgent, (agent) =>
  Effect.map(agent.registered, (registered) =>
    registered
      ? jsonResponse({ status: "ready" })
      : jsonResponse({ status: "not ready", reason: "not registered with the controller" }, 503)
  )
)

export const nodeRoutes = livenessRoutes.pipe(
  HttpRouter.get("/v1/ready", readiness),
  HttpRouter.get("/readyz", readiness)
)
