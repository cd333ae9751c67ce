/**
 * Content negotiation of `POST /v1/score` (svc-server and the controller): `Accept:
 * application/xml`, `text/csv` or `text/x-microdvd` answer in the reference tool's layouts;
 * anything else (no header, `application/json`, `*\/*`) keeps the JSON ScoreResponse.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ScoreResult } from "../scorer/index.ts"
import { type LibvmafFormat, libvmafFormats, mediaTypes, renderLibvmaf, reportOf } from "./libvmaf.ts"

/** What a score call answers with: the JSON ScoreResponse, or one of the reference layouts. */
export type ScoreRepresentation = "response" | Exclude<LibvmafFormat, "json">

interface AcceptEntry {
  readonly type: string
  readonly quality: number
  readonly order: number
}

const parseAccept = (header: string): ReadonlyArray<AcceptEntry> =>
  header
    .split(",")
    .map((part, order) => {
      const [type = "", ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase())
      const q = parameters.find((parameter) => parameter.startsWith("q="))
      const quality = q === undefined ? 1 : Number(q.slice(2))
      return { type, quality: Number.isFinite(quality) ? quality : 0, order }
    })
    .filter((entry) => entry.type !== "" && entry.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.order - b.order)

const layoutOf = (type: string): ScoreRepresentation | undefined => {
  if (type === "application/json" || type === "*/*" || type === "application/*") return "response"
  for (const format of libvmafFormats) {
    if (format !== "json" && (mediaTypes[format] === type || (format === "xml" && type === "text/xml"))) return format
  }
  return undefined
}

/** The representation the client prefers; JSON unless it asks for a reference layout. */
export const negotiateScore = (accept: string | undefined): ScoreRepresentation => {
  if (accept === undefined) return "response"
  for (const entry of parseAccept(accept)) {
    const layout = layoutOf(entry.type)
    if (layout !== undefined) return layout
  }
  return "response"
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The reference layouts list every frame, so the request is scored with `per_frame`. A body
 * that is not an object is left as it is: validation refuses it as usual.
 */
export const requestFor = (representation: ScoreRepresentation, body: unknown): unknown => {
  if (representation === "response" || !isRecord(body)) return body
  const options = body["options"]
  if (options !== undefined && options !== null && !isRecord(options)) return body
  return { ...body, options: { ...(options ?? {}), per_frame: true } }
}

const geometryOf = (body: unknown) => {
  const options = isRecord(body) && isRecord(body["options"]) ? body["options"] : {}
  const dimension = (name: string) => (typeof options[name] === "number" ? Number(options[name]) : 0)
  return { width: dimension("width"), height: dimension("height") }
}

const extrasOf = (body: unknown): ReadonlyArray<string> | undefined => {
  const options = isRecord(body) && isRecord(body["options"]) ? body["options"] : {}
  const features = options["features"]
  return Array.isArray(features) ? features.filter((name): name is string => typeof name === "string") : undefined
}

/** The body and media type of a result in a reference layout. */
export const renderScore = (
  format: Exclude<ScoreRepresentation, "response">,
  result: ScoreResult,
  body: unknown,
  seconds: number
): { readonly text: string; readonly contentType: string } => ({
  text: renderLibvmaf(format, reportOf(result, { ...geometryOf(body), seconds, extras: extrasOf(body) })),
  contentType: `${mediaTypes[format]}; charset=utf-8`
})

/**
 * Wraps a score call for an HTTP handler: `score` receives the request body (with `per_frame`
 * when a layout needs it) and the answer is the JSON ScoreResponse or the negotiated layout.
 */
export const negotiatedScore = <EB, E, R>(
  accept: string | undefined,
  body: Effect.Effect<unknown, EB>,
  score: (body: Effect.Effect<unknown, EB>) => Effect.Effect<ScoreResult, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | EB, R> => {
  const representation = negotiateScore(accept)
  if (representation === "response") return Effect.map(score(body), (result) => HttpServerResponse.unsafeJson(result))
  return Effect.gen(function* () {
    const original = yield* Effect.cached(body)
    const started = performance.now()
    const result = yield* score(Effect.map(original, (decoded) => requestFor(representation, decoded)))
    const seconds = (performance.now() - started) / 1000
    const rendered = renderScore(representation, result, yield* original, seconds)
    return HttpServerResponse.text(rendered.text, { contentType: rendered.contentType })
  })
}
