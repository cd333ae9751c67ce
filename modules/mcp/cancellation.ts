/**
 * Cancellation across stateless HTTP requests. A client cancels a tool call by posting
 * `notifications/cancelled` with the call's request id; without sessions that notification
 * reaches a fresh server, not the one running the call. The calls in flight are kept here by
 * (bearer token, request id), so a caller can cancel only its own calls; an entry lives exactly
 * as long as its call, so the map is bounded by the calls in flight.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js"

export interface TrackedCall {
  /** Aborted when the call's own request is aborted or a matching cancellation arrives. */
  readonly signal: AbortSignal
  readonly release: () => void
}

export class InFlightCalls {
  private readonly calls = new Map<string, Set<AbortController>>()

  private key(token: string, requestId: RequestId): string {
    return `${typeof requestId}:${requestId}\u0000${token}`
  }

  track(token: string, requestId: RequestId, requestSignal: AbortSignal): TrackedCall {
    const key = this.key(token, requestId)
    const controller = new AbortController()
    const abort = () => controller.abort(requestSignal.reason)
    requestSignal.addEventListener("abort", abort, { once: true })
    if (requestSignal.aborted) abort()
    const entries = this.calls.get(key) ?? new Set()
    entries.add(controller)
    this.calls.set(key, entries)
    return {
      signal: controller.signal,
      release: () => {
        requestSignal.removeEventListener("abort", abort)
        entries.delete(controller)
        if (entries.size === 0 && this.calls.get(key) === entries) this.calls.delete(key)
      }
    }
  }

  /** Aborts the caller's calls with this request id; how many there were. */
  cancel(token: string, requestId: RequestId, reason: unknown): number {
    const entries = this.calls.get(this.key(token, requestId))
    for (const controller of entries ?? []) controller.abort(reason)
    return entries?.size ?? 0
  }

  get size(): number {
    return this.calls.size
  }
}
