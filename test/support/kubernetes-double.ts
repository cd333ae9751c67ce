/**
 * A loopback stand-in for the Kubernetes API, just enough of it for the tenant
 * source tests: list `SvcTenant` resources of a namespace, page by page.
 *
 * Limits of the double (see README): only `GET /apis/svc.dev/v1/namespaces/<ns>/svctenants`;
 * `limit`/`continue` paging over a snapshot-free list (a change between pages is
 * visible on later pages); `watch=true`, label/field selectors and `resourceVersion`
 * semantics are not implemented (watch answers 400); one bearer token; no admission,
 * defaulting or pruning (documents are served as stored, so the controller's own
 * validation is what the tests see); no API discovery.
 */
import { TENANT_API_GROUP, TENANT_API_VERSION, TENANT_LIST_KIND, TENANT_PLURAL } from "../../modules/auth/tenant.ts"
import { LoopbackServer } from "../../local/auth.ts"

const status = (code: number, reason: string, message: string) =>
  Response.json(
    { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code },
    { status: code }
  )

export class KubernetesDouble {
  readonly server: LoopbackServer
  /** Namespace → stored resources, served in insertion order. */
  readonly namespaces = new Map<string, Array<Record<string, unknown>>>()
  token: string
  /** Namespaces the service account may not list (answered 403). */
  readonly forbidden = new Set<string>()
  /** When set, every request answers this status (an unhealthy API server). */
  failWith: number | undefined
  pageSize = 2
  private resourceVersion = 1

  constructor(token: string, tls?: { readonly cert: string; readonly key: string }) {
    this.token = token
    this.server = new LoopbackServer((request) => this.handle(request), tls)
  }

  apiBase(host = "127.0.0.1"): string {
    return this.server.url("", host)
  }

  /** Stores (or replaces, by name) a resource, stamping the metadata the API server adds. */
  put(namespace: string, document: Record<string, unknown>): void {
    const items = this.namespaces.get(namespace) ?? []
    const metadata = (document.metadata ?? {}) as Record<string, unknown>
    const stored = {
      ...document,
      metadata: {
        ...metadata,
        namespace,
        uid: `uid-${String(metadata.name)}`,
        resourceVersion: String(++this.resourceVersion)
      }
    }
    const index = items.findIndex((item) => (item.metadata as Record<string, unknown>).name === metadata.name)
    if (index >= 0) items[index] = stored
    else items.push(stored)
    this.namespaces.set(namespace, items)
  }

  stop(): void {
    this.server.stop()
  }

  private handle(request: Request): Response {
    if (this.failWith !== undefined) return status(this.failWith, "InternalError", "the double was told to fail")
    if (request.headers.get("authorization") !== `Bearer ${this.token}`)
      return status(401, "Unauthorized", "Unauthorized")
    const url = new URL(request.url)
    const match = new RegExp(
      `^/apis/${TENANT_API_GROUP.replaceAll(".", "\\.")}/v1/namespaces/([^/]+)/${TENANT_PLURAL}$`
    ).exec(url.pathname)
    if (request.method !== "GET" || match === null)
      return status(404, "NotFound", "the server could not find the requested resource")
    const namespace = decodeURIComponent(match[1] ?? "")
    if (url.searchParams.get("watch") === "true")
      return status(400, "BadRequest", "watch is not implemented by the double")
    if (this.forbidden.has(namespace)) {
      return status(
        403,
        "Forbidden",
        `${TENANT_PLURAL}.${TENANT_API_GROUP} is forbidden: cannot list resource "${TENANT_PLURAL}" in namespace "${namespace}"`
      )
    }
    const items = this.namespaces.get(namespace) ?? []
    const limit = Math.min(Number(url.searchParams.get("limit") ?? items.length) || items.length, this.pageSize)
    const offset = Number(Buffer.from(url.searchParams.get("continue") ?? "", "base64url").toString() || "0")
    const page = items.slice(offset, offset + limit)
    const next = offset + limit < items.length ? Buffer.from(String(offset + limit)).toString("base64url") : undefined
    return Response.json({
      apiVersion: TENANT_API_VERSION,
      kind: TENANT_LIST_KIND,
      metadata: { resourceVersion: String(this.resourceVersion), ...(next === undefined ? {} : { continue: next }) },
      items: page
    })
  }
}
