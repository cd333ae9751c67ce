/** When a long-poll may skip its claim: a tenant is idle from a short claim to its next wake-up. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeWorkSignal } from "./work-signal.ts"

describe("work signal", () => {
  it.scoped(
    "a short claim leaves its tenant idle until that tenant's next wake-up, or until changes may be missed",
    () =>
      Effect.gen(function* () {
        const signal = makeWorkSignal()
        const first = yield* signal.awaitWork("a")
        expect(first.idle()).toBe(false)
        first.drained()
        expect(first.idle()).toBe(true)
        // Another tenant's job changes nothing for "a"; a job of "a" ends its idleness.
        signal.notify("b", 1)
        expect((yield* signal.awaitWork("a")).idle()).toBe(true)
        expect((yield* signal.awaitWork("b")).idle()).toBe(false)
        signal.notify("a", 1)
        expect(first.idle()).toBe(false)
        // A wake-up between a waiter's subscription and its claim's answer: the claim may have
        // missed that job, so its emptiness is not trusted.
        const second = yield* signal.awaitWork("a")
        signal.notify("a", 1)
        second.drained()
        expect(second.idle()).toBe(false)
        const third = yield* signal.awaitWork("a")
        third.drained()
        expect(third.idle()).toBe(true)
        signal.forget()
        expect(third.idle()).toBe(false)
        third.drained()
        expect(third.idle()).toBe(false)
      })
  )
})
