/** svc-server: the REST + gRPC scoring server (seed 001). Wiring only. */
import { Layer } from "effect"
import { runService } from "../../modules/runtime/main.ts"
import { scoringGrpcLayer } from "../../modules/scoring-api/grpc.ts"
import { openGate } from "../../modules/scoring-api/gate.ts"
import { scoringHttpLayer } from "../../modules/scoring-api/http.ts"
import { inputRootsNotice, ScoringApi } from "../../modules/scoring-api/scoring.ts"

const name = "svc-server"

runService(
  { executable: name },
  Layer.mergeAll(scoringHttpLayer(name, openGate), scoringGrpcLayer(name), inputRootsNotice).pipe(
    Layer.provide(ScoringApi.layer(name))
  )
)
