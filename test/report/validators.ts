// Test helper: the two reference validators the checker is compared with.
import Ajv2020 from "ajv/dist/2020"
import { Either, Schema } from "effect"
import { readFileSync } from "node:fs"
import testerReportJsonSchema from "../../schemas/tester-report.schema.json"
import { closedObjects, Report } from "../../modules/report/schema.ts"
import type { SampleVersion } from "./invalid-cases.ts"

// allowUnionTypes: the seed's "integer or null" fields are written as type arrays.
const ajvValidate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(
  testerReportJsonSchema
)

export const acceptedByAjv = (document: unknown): boolean => ajvValidate(document)

const decodeReport = Schema.decodeUnknownEither(Report, closedObjects)
export const acceptedByEffectSchema = (document: unknown): boolean => Either.isRight(decodeReport(document))

export const samplePath = (version: SampleVersion): string =>
  new URL(`./samples/${version}.json`, import.meta.url).pathname

export const loadSample = (version: SampleVersion): unknown => JSON.parse(readFileSync(samplePath(version), "utf8"))
