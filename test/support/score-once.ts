/** Scores one request body (argv[2], JSON) through the Scorer service in a fresh process and
 * prints the result as JSON: for tests of process-wide settings such as SVC_SCORER_CPU. */
import { Effect } from "effect"
import { scoreBody, scorerRuntime } from "../../modules/scorer/test/runtime.ts"

const runtime = scorerRuntime()
const result = await runtime.runPromise(Effect.either(scoreBody(JSON.parse(process.argv[2] ?? "{}"))))
await runtime.dispose()
process.stdout.write(
  JSON.stringify(result._tag === "Right" ? result.right : { error: result.left._tag, message: result.left.message })
)
