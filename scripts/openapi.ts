/**
 * `npm run openapi`: writes the request schemas of schemas/openapi.json (ScoreRequest,
 * ScoreOptions, the ladder's) from the Effect Schema, the one source of the request contract.
 * Run it after changing modules/scorer/request.ts or ladder.ts; the contract test fails until then.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { withRequestSchemas } from "../modules/scorer/index.ts"

const root = resolve(dirname(new URL(import.meta.url).pathname), "..")
export const openApiPath = join(root, "schemas/openapi.json")

/** The document's text as the repository keeps it (2-space JSON, final newline). */
export const openApiText = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`

if (import.meta.main) {
  const current = readFileSync(openApiPath, "utf8")
  const written = openApiText(withRequestSchemas(JSON.parse(current)))
  if (written === current) console.log("schemas/openapi.json: request schemas already derived from the Schema")
  else {
    writeFileSync(openApiPath, written)
    console.log("schemas/openapi.json: request schemas rewritten from the Schema")
  }
}
