/**
 * Where tenant resources come from (seed 5.8): a file of YAML or JSON documents, or
 * the orchestrator (Kubernetes) API, listed again every refresh interval.
 */
import { Config, Data, Effect, Either, Option } from "effect"
import { readFile } from "node:fs/promises"
import { parseAllDocuments } from "yaml"
import { httpGet } from "./http.ts"
import { TENANT_API_GROUP, TENANT_LIST_KIND, TENANT_PLURAL } from "./tenant.ts"

export class TenantSourceError extends Data.TaggedError("TenantSourceError")<{ readonly message: string }> {}

export interface SourceDocument {
  readonly origin: string
  readonly value: unknown
}

export interface TenantSource {
  readonly description: string
  /** Whether `List` / `SvcTenantList` documents are expanded (files only). */
  readonly expandsLists: boolean
  readonly read: Effect.Effect<ReadonlyArray<SourceDocument>, TenantSourceError>
}

/** Parses a file of YAML or JSON documents (JSON is read as YAML); empty documents are skipped. */
export const parseTenantFile = (text: string, path: string): Either.Either<ReadonlyArray<SourceDocument>, string> => {
  const documents = parseAllDocuments(text)
  const list = Array.isArray(documents) ? documents : [documents]
  const broken = list.find((document) => document.errors.length > 0)
  if (broken !== undefined)
    return Either.left(`${path} is not YAML or JSON: ${broken.errors[0]?.message ?? "parse error"}`)
  return Either.right(
    list
      .map((document, index) => ({ origin: `${path} document ${index + 1}`, value: document.toJS() as unknown }))
      .filter((document) => document.value !== null && document.value !== undefined)
  )
}

export const fileTenantSource = (path: string): TenantSource => ({
  description: `file ${path}`,
  expandsLists: true,
  read: Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (cause) => new TenantSourceError({ message: `cannot read ${path}: ${String(cause)}` })
    })
    return yield* Either.mapLeft(parseTenantFile(text, path), (message) => new TenantSourceError({ message }))
  })
})

/** How the controller reaches the orchestrator API. Tests build one pointing at a loopback double. */
export interface OrchestratorAccess {
  /** e.g. `https://10.0.0.1:443`. */
  readonly apiBase: string
  readonly namespace: string
  /** Re-read on every list: projected service-account tokens rotate. */
  readonly tokenPath: string
  /** PEM bundle trusted for the API server; undefined for a plain-http test double. */
  readonly caPath: string | undefined
  readonly timeoutMillis: number
  readonly maxBodyBytes: number
}

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
export const ORCHESTRATOR_TIMEOUT_MILLIS = 10_000
export const ORCHESTRATOR_MAX_BODY_BYTES = 8 * 1024 * 1024
/** Page size of each list request; pages are followed with `continue`. */
export const ORCHESTRATOR_PAGE_SIZE = 100

/**
 * The in-cluster access: API address from `KUBERNETES_SERVICE_HOST`/`_PORT`, token,
 * CA and own namespace from the service-account directory (overridable for tests).
 */
export const inClusterAccess = (
  namespace: string | undefined,
  serviceAccountDir: string = SERVICE_ACCOUNT_DIR
): Effect.Effect<OrchestratorAccess, TenantSourceError> =>
  Effect.gen(function* () {
    const missing = (what: string) => new TenantSourceError({ message: `orchestrator source: ${what}` })
    const host = yield* Config.string("KUBERNETES_SERVICE_HOST").pipe(
      Effect.mapError(() => missing("KUBERNETES_SERVICE_HOST is not set (not running in a cluster?)"))
    )
    const port = yield* Config.option(Config.string("KUBERNETES_SERVICE_PORT")).pipe(
      Effect.map(Option.getOrElse(() => "443")),
      Effect.mapError(() => missing("KUBERNETES_SERVICE_PORT is invalid"))
    )
    const ownNamespace =
      namespace ??
      (yield* Effect.tryPromise({
        try: () => readFile(`${serviceAccountDir}/namespace`, "utf8").then((text) => text.trim()),
        catch: () => missing(`SVC_AUTH_TENANTS_NAMESPACE is unset and ${serviceAccountDir}/namespace cannot be read`)
      }))
    return {
      apiBase: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      namespace: ownNamespace,
      tokenPath: `${serviceAccountDir}/token`,
      caPath: `${serviceAccountDir}/ca.crt`,
      timeoutMillis: ORCHESTRATOR_TIMEOUT_MILLIS,
      maxBodyBytes: ORCHESTRATOR_MAX_BODY_BYTES
    }
  })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Lists the `SvcTenant` resources of the namespace, following `continue` pages. */
export const orchestratorTenantSource = (access: OrchestratorAccess): TenantSource => {
  const collection = `${access.apiBase}/apis/${TENANT_API_GROUP}/v1/namespaces/${encodeURIComponent(access.namespace)}/${TENANT_PLURAL}`
  const fail = (message: string) => new TenantSourceError({ message: `orchestrator source: ${message}` })
  const readText = (path: string) =>
    Effect.tryPromise({ try: () => readFile(path, "utf8"), catch: () => fail(`cannot read ${path}`) })
  return {
    description: `orchestrator ${collection}`,
    expandsLists: false,
    read: Effect.gen(function* () {
      const token = (yield* readText(access.tokenPath)).trim()
      const caCertificates = access.caPath === undefined ? undefined : yield* readText(access.caPath)
      const documents: Array<SourceDocument> = []
      let continueToken: string | undefined
      do {
        const query = new URLSearchParams({ limit: String(ORCHESTRATOR_PAGE_SIZE) })
        if (continueToken !== undefined) query.set("continue", continueToken)
        const response = yield* httpGet(`${collection}?${query}`, {
          timeoutMillis: access.timeoutMillis,
          maxBodyBytes: access.maxBodyBytes,
          maxRedirects: 0,
          headers: { authorization: `Bearer ${token}`, accept: "application/json" },
          ...(caCertificates === undefined ? {} : { caCertificates })
        }).pipe(Effect.mapError((error) => fail(error.message)))
        const body = yield* Effect.try({
          try: (): unknown => JSON.parse(response.body),
          catch: () => fail(`HTTP ${response.status}: response is not JSON`)
        })
        if (response.status !== 200) {
          const reason = isRecord(body) && typeof body.message === "string" ? body.message : "no message"
          return yield* Effect.fail(fail(`HTTP ${response.status}: ${reason}`))
        }
        if (!isRecord(body) || body.kind !== TENANT_LIST_KIND || !Array.isArray(body.items)) {
          return yield* Effect.fail(fail(`expected a ${TENANT_LIST_KIND} with items`))
        }
        body.items.forEach((item, index) => {
          const name =
            isRecord(item) && isRecord(item.metadata) && typeof item.metadata.name === "string"
              ? item.metadata.name
              : `item ${index}`
          documents.push({ origin: `${TENANT_PLURAL}/${name}`, value: item })
        })
        const metadata = isRecord(body.metadata) ? body.metadata : {}
        continueToken =
          typeof metadata.continue === "string" && metadata.continue !== "" ? metadata.continue : undefined
      } while (continueToken !== undefined)
      return documents
    })
  }
}
