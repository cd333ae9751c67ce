/**
 * contract.ts on a small schema: the rule words and the OpenAPI 3.0.3 shapes come from the
 * schema itself (values, ranges, optional and nullable), the annotations add only words.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { component, documented, field, fieldRules, openApiComponents, optionalField } from "./contract.ts"

const Inner = component(
  Schema.Struct({
    mode: optionalField(Schema.Literal("", "fast", "slow"), { doc: "How.", rule: { note: '("": fast)' } })
  }),
  "Inner",
  "The inner options."
)
const Outer = component(
  Schema.Struct({
    path: field(Schema.String, { doc: "Where.", rule: { note: "(a path)" }, openapi: { minLength: 1 } }),
    count: optionalField(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThanOrEqualTo(9)), {
      rule: { unit: "of tries", note: "(0: one)" }
    }),
    tags: optionalField(Schema.Array(documented(Schema.Literal("a", "b"), {})), {
      rule: { text: "is not a list of tags" }
    }),
    inner: optionalField(Schema.NullOr(Inner), { rule: { text: "is not an object of inner options" } })
  }),
  "Outer"
)

describe("contract", () => {
  it("words every field's rule from its schema: every allowed value, the range, the note", () => {
    expect(fieldRules(Outer)).toEqual({
      path: "is not a string (a path)",
      count: "is not a whole number of tries from 0 to 9 (0: one)",
      tags: "is not a list of tags",
      "tags[]": 'is not one of "a", "b"',
      inner: "is not an object of inner options",
      "inner.mode": 'is not one of "fast", "slow" ("": fast)'
    })
  })

  it("writes OpenAPI 3.0.3 components: required fields, enums, bounds, a nullable reference", () => {
    expect(openApiComponents([Outer])).toEqual({
      Inner: {
        type: "object",
        description: "The inner options.",
        additionalProperties: false,
        properties: { mode: { type: "string", enum: ["", "fast", "slow"], description: "How." } }
      },
      Outer: {
        type: "object",
        additionalProperties: false,
        required: ["path"],
        properties: {
          path: { type: "string", minLength: 1, description: "Where." },
          count: { type: "integer", format: "int32", minimum: 0, maximum: 9 },
          tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
          inner: { type: "object", nullable: true, allOf: [{ $ref: "#/components/schemas/Inner" }] }
        }
      }
    })
  })

  it("refuses to guess the words of a shape it cannot name", () => {
    const Loose = Schema.Struct({ either: optionalField(Schema.Union(Schema.String, Schema.Number), {}) })
    expect(() => fieldRules(Loose)).toThrow(/give the field's rule text/)
  })
})
