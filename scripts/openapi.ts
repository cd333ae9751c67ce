/**
 * `npm run openapi`: writes the request schemas of schemas/openapi.json (ScoreRequest,
 * ScoreOptions, the ladder's) from the Effect Schema, the one source of the request contract.
 * `npm run build` runs it after writing the native feature list (a new extractor's flag reaches the
 * schema's feature enum); run it alone after changing modules/scorer/request.ts or ladder.ts.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { withRequestSchemas } from "../modules/scorer/index.ts"

const root = resolve(dirname(new URL(import.meta.url).pathname), "..")
export const openApiPath = join(root, "schemas/openapi.json")

/** The document's text as the repository keeps it (2-space JSON, final newline). */
export const openApiText = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`

/** Rewrites the request schemas of schemas/openapi.json from the Schema; true when the file changed. */
export const writeOpenApi = (): boolean => {
  const current = readFileSync(openApiPath, "utf8")
  const written = openApiText(withRequestSchemas(JSON.parse(current)))
  if (written === current) return false
  writeFileSync(openApiPath, written)
  return true
}

if (import.meta.main) {
  console.log(
    writeOpenApi()
      ? "schemas/openapi.json: request schemas rewritten from the Schema"
      : "schemas/openapi.json: request schemas already derived from the Schema"
  )
}
