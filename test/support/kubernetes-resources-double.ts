/**
 * A loopback stand-in for the parts of the Kubernetes API that svc-operator uses (beside
 * kubernetes-double.ts, which serves the tenant source): namespaced custom resources and Leases
 * with the semantics an operator depends on.
 *
 * - `GET` list (with the collection's resourceVersion) and `?watch=true&resourceVersion=N`: a
 *   stream of ADDED/MODIFIED/DELETED events after N, one JSON object a line; a version older
 *   than the last `compact()` answers an ERROR event with a 410 Status, as the real API does.
 * - `POST` (create: uid, resourceVersion, generation 1, creationTimestamp), `GET` one, `PUT`
 *   (optimistic concurrency: a stale `metadata.resourceVersion` answers 409 Conflict; status is
 *   ignored; a spec change bumps `generation`), `PUT .../status` (only status changes), `DELETE`.
 * - Finalizers: DELETE of an object with finalizers sets `deletionTimestamp`; the object goes
 *   once an update leaves no finalizer.
 * - `injectConflicts(n)`: the next n writes answer 409 (as if someone else wrote first).
 * - Core resources under `/api/v1` (events) with `metadata.generateName`.
 * - Lists page by `limit`/`continue` (the continue token is an offset into the collection at the
 *   time of the request: no snapshot); `chunked` sends list bodies without a Content-Length, in
 *   64 KiB chunks, as a real API server may; `ignoreLimit` answers every list whole (an old or
 *   hostile server).
 * Not implemented: label/field selectors, PATCH, admission or schema validation (the tests
 * validate samples against the CRDs separately), server-side apply, cluster-scoped kinds.
 */
import { LoopbackServer } from "../../local/auth.ts"

type Resource = Record<string, unknown> & { metadata: Record<string, unknown> }

interface StoredEvent {
  readonly version: number
  readonly collection: string
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  readonly object: Resource
}

interface Watcher {
  readonly collection: string
  readonly push: (line: string) => void
  readonly close: () => void
}

const status = (code: number, reason: string, message: string) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  code
})
const fail = (code: number, reason: string, message: string) =>
  Response.json(status(code, reason, message), { status: code })

// Group resources under /apis/<group>/<version>, core ones (events) under /api/v1 (group "core").
const PATH = /^\/(?:apis\/([^/]+)|api)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?(?:\/(status))?$/

export class KubernetesResourcesDouble {
  readonly server: LoopbackServer
  readonly objects = new Map<string, Resource>()
  private readonly events: Array<StoredEvent> = []
  private readonly watchers = new Set<Watcher>()
  private version = 100
  private compactedBefore = 0
  private conflictsToInject = 0
  /** Every write the double answered, for assertions: "PUT svcjobs/j status 409". */
  readonly writes: Array<string> = []
  /** List bodies are streamed without a Content-Length (chunked transfer encoding). */
  chunked = false
  /** Lists ignore `limit` and answer every item at once. */
  ignoreLimit = false

  constructor(
    public token: string,
    tls?: { readonly cert: string; readonly key: string }
  ) {
    this.server = new LoopbackServer((request) => this.handle(request), tls)
  }

  apiBase(host = "127.0.0.1"): string {
    return this.server.url("", host)
  }

  /** The object, as the API would answer a GET (undefined when absent). */
  get(group: string, plural: string, namespace: string, name: string): Resource | undefined {
    const found = this.objects.get(this.key(group, plural, namespace, name))
    return found === undefined ? undefined : structuredClone(found)
  }

  list(group: string, plural: string, namespace: string): Array<Resource> {
    const prefix = `${this.collectionKey(group, plural, namespace)}/`
    return [...this.objects].filter(([key]) => key.startsWith(prefix)).map(([, value]) => structuredClone(value))
  }

  /** Creates an object as `kubectl apply` of a new resource would. */
  create(group: string, plural: string, namespace: string, document: Record<string, unknown>): Resource {
    const created = this.insert(group, plural, namespace, document)
    if (created instanceof Response) throw new Error("already exists")
    return structuredClone(created)
  }

  /** `kubectl delete`: with finalizers, only marks the object. */
  delete(group: string, plural: string, namespace: string, name: string): void {
    this.remove(this.key(group, plural, namespace, name), this.collectionKey(group, plural, namespace))
  }

  /** Every event of a collection still in the history, oldest first. */
  history(
    group: string,
    plural: string,
    namespace: string
  ): ReadonlyArray<{ readonly type: string; readonly object: Resource }> {
    const collection = this.collectionKey(group, plural, namespace)
    return this.events.filter((event) => event.collection === collection).map((event) => structuredClone(event))
  }

  /** Writes an object's status as someone with rights on the status subresource would (no event kept apart). */
  setStatus(group: string, plural: string, namespace: string, name: string, status: Record<string, unknown>): void {
    const key = this.key(group, plural, namespace, name)
    const stored = this.objects.get(key)
    if (stored === undefined) throw new Error(`${name} not found`)
    const next = this.stamp({ ...stored, status })
    this.objects.set(key, next)
    this.record(this.collectionKey(group, plural, namespace), "MODIFIED", next)
  }

  injectConflicts(count: number): void {
    this.conflictsToInject = count
  }

  /** Forgets the event history: watches from an older version get 410 Gone. */
  compact(): void {
    this.compactedBefore = this.version
    this.events.length = 0
  }

  stop(): void {
    for (const watcher of this.watchers) watcher.close()
    this.server.stop()
  }

  private key(group: string, plural: string, namespace: string, name: string) {
    return `${this.collectionKey(group, plural, namespace)}/${name}`
  }

  private collectionKey(group: string, plural: string, namespace: string) {
    return `${group}/${plural}/${namespace}`
  }

  private record(collection: string, type: StoredEvent["type"], object: Resource) {
    const event = { version: this.version, collection, type, object: structuredClone(object) }
    this.events.push(event)
    for (const watcher of this.watchers)
      if (watcher.collection === collection) watcher.push(JSON.stringify({ type, object: event.object }))
  }

  private stamp(object: Resource): Resource {
    object.metadata.resourceVersion = String(++this.version)
    return object
  }

  private insert(group: string, plural: string, namespace: string, document: Record<string, unknown>) {
    const metadata = { ...((document.metadata ?? {}) as Record<string, unknown>) }
    if (metadata.name === undefined && typeof metadata.generateName === "string")
      metadata.name = `${metadata.generateName}${crypto.randomUUID().slice(0, 5)}`
    const name = String(metadata.name ?? "")
    const key = this.key(group, plural, namespace, name)
    if (name === "") return fail(422, "Invalid", "metadata.name: Required value")
    if (this.objects.has(key)) return fail(409, "AlreadyExists", `${plural} "${name}" already exists`)
    const object = this.stamp({
      ...document,
      metadata: {
        ...metadata,
        namespace,
        uid: crypto.randomUUID(),
        generation: 1,
        creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z")
      }
    })
    this.objects.set(key, object)
    this.record(this.collectionKey(group, plural, namespace), "ADDED", object)
    return object
  }

  private remove(key: string, collection: string): Response | Resource {
    const stored = this.objects.get(key)
    if (stored === undefined) return fail(404, "NotFound", "not found")
    const finalizers = (stored.metadata.finalizers as Array<string> | undefined) ?? []
    if (finalizers.length > 0) {
      if (stored.metadata.deletionTimestamp === undefined) {
        stored.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z")
        this.stamp(stored)
        this.record(collection, "MODIFIED", stored)
      }
      return stored
    }
    this.objects.delete(key)
    this.stamp(stored)
    this.record(collection, "DELETED", stored)
    return stored
  }

  private async handle(request: Request): Promise<Response> {
    if (request.headers.get("authorization") !== `Bearer ${this.token}`)
      return fail(401, "Unauthorized", "Unauthorized")
    const url = new URL(request.url)
    const match = PATH.exec(url.pathname)
    if (match === null) return fail(404, "NotFound", "the server could not find the requested resource")
    const [, group = "core", , namespace = "", plural = "", name, sub] = match
    const collection = this.collectionKey(group, plural, namespace)
    if (name === undefined) {
      if (request.method === "POST") {
        const created = this.insert(group, plural, namespace, (await request.json()) as Record<string, unknown>)
        this.writes.push(`POST ${plural} ${created instanceof Response ? created.status : 201}`)
        return created instanceof Response ? created : Response.json(created, { status: 201 })
      }
      if (request.method !== "GET") return fail(405, "MethodNotAllowed", "method not allowed")
      if (url.searchParams.get("watch") === "true")
        return this.watch(collection, url.searchParams.get("resourceVersion"))
      const items = this.list(group, plural, namespace)
      const asked = Number(url.searchParams.get("limit") ?? "0")
      const limit = this.ignoreLimit || !(asked > 0) ? items.length : asked
      const offset = Number(url.searchParams.get("continue") ?? "0") || 0
      const end = offset + limit
      return this.listResponse({
        apiVersion: `${group}/${match[2]}`,
        kind: "List",
        metadata: {
          resourceVersion: String(this.version),
          ...(end < items.length ? { continue: String(end) } : {})
        },
        items: items.slice(offset, end)
      })
    }
    const key = this.key(group, plural, namespace, decodeURIComponent(name))
    const stored = this.objects.get(key)
    switch (request.method) {
      case "GET":
        return stored === undefined ? fail(404, "NotFound", `${plural} "${name}" not found`) : Response.json(stored)
      case "DELETE": {
        const removed = this.remove(key, collection)
        this.writes.push(`DELETE ${plural} ${removed instanceof Response ? removed.status : 200}`)
        return removed instanceof Response ? removed : Response.json(removed)
      }
      case "PUT": {
        const body = (await request.json()) as Resource
        const outcome = this.update(key, collection, stored, body, sub === "status")
        this.writes.push(`PUT ${plural}${sub === "status" ? "/status" : ""} ${outcome.status}`)
        return outcome
      }
      default:
        return fail(405, "MethodNotAllowed", "method not allowed")
    }
  }

  private listResponse(list: Record<string, unknown>): Response {
    if (!this.chunked) return Response.json(list)
    const bytes = new TextEncoder().encode(JSON.stringify(list))
    let offset = 0
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (offset >= bytes.byteLength) return controller.close()
        controller.enqueue(bytes.slice(offset, offset + 65_536))
        offset += 65_536
      }
    })
    return new Response(body, { headers: { "content-type": "application/json" } })
  }

  private update(key: string, collection: string, stored: Resource | undefined, body: Resource, status: boolean) {
    if (stored === undefined) return fail(404, "NotFound", "not found")
    if (this.conflictsToInject > 0) {
      this.conflictsToInject--
      return fail(409, "Conflict", "the object has been modified; please apply your changes to the latest version")
    }
    if (body.metadata?.resourceVersion !== stored.metadata.resourceVersion)
      return fail(409, "Conflict", "the object has been modified; please apply your changes to the latest version")
    let next: Resource
    if (status) {
      next = { ...stored, status: body.status }
    } else {
      const specChanged = JSON.stringify(body.spec) !== JSON.stringify(stored.spec)
      next = {
        ...body,
        status: stored.status,
        metadata: {
          ...body.metadata,
          uid: stored.metadata.uid,
          namespace: stored.metadata.namespace,
          creationTimestamp: stored.metadata.creationTimestamp,
          deletionTimestamp: stored.metadata.deletionTimestamp,
          generation: Number(stored.metadata.generation ?? 1) + (specChanged ? 1 : 0)
        }
      }
      if (next.metadata.deletionTimestamp === undefined) delete next.metadata.deletionTimestamp
    }
    this.stamp(next)
    const finalizers = (next.metadata.finalizers as Array<string> | undefined) ?? []
    if (next.metadata.deletionTimestamp !== undefined && finalizers.length === 0) {
      this.objects.delete(key)
      this.record(collection, "DELETED", next)
      return Response.json(next)
    }
    this.objects.set(key, next)
    this.record(collection, "MODIFIED", next)
    return Response.json(next)
  }

  private watch(collection: string, from: string | null): Response {
    const since = Number(from ?? "0")
    const encoder = new TextEncoder()
    let watcher: Watcher | undefined
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const push = (line: string) => controller.enqueue(encoder.encode(`${line}\n`))
        if (since < this.compactedBefore) {
          push(JSON.stringify({ type: "ERROR", object: status(410, "Expired", "too old resource version") }))
          controller.close()
          return
        }
        for (const event of this.events)
          if (event.collection === collection && event.version > since)
            push(JSON.stringify({ type: event.type, object: event.object }))
        watcher = {
          collection,
          push,
          close: () => {
            try {
              controller.close()
            } catch {
              // already closed by the client
            }
          }
        }
        this.watchers.add(watcher)
      },
      cancel: () => {
        if (watcher !== undefined) this.watchers.delete(watcher)
      }
    })
    return new Response(body, { headers: { "content-type": "application/json" } })
  }
}
