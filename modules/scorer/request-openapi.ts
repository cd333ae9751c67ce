/**
 * The OpenAPI 3.0.3 schemas of the score and ladder requests, derived from their Effect Schemas
 * (contract.ts): `npm run openapi` writes them into schemas/openapi.json, and
 * test/structure/score-request-contract.test.ts fails when the file holds anything else.
 */
import { openApiComponents } from "./contract.ts"
import { LadderRequest } from "./ladder.ts"
import { ScoreRequest } from "./request.ts"

export const requestOpenApiSchemas = () => openApiComponents([ScoreRequest, LadderRequest])

type OpenApiDocument = { readonly components: { readonly schemas: Readonly<Record<string, unknown>> } }

/**
 * `document` with its request schemas replaced by the derived ones (each in its place; a new one
 * after the others): the rest of the document (paths, responses) is written by hand.
 */
export const withRequestSchemas = <D extends OpenApiDocument>(document: D): D => {
  const derived = requestOpenApiSchemas()
  const schemas = Object.fromEntries(
    Object.entries(document.components.schemas).map(([name, schema]) => [name, derived[name] ?? schema])
  )
  for (const [name, schema] of Object.entries(derived)) if (!(name in schemas)) schemas[name] = schema
  return { ...document, components: { ...document.components, schemas } }
}
