/**
 * Wake-ups of long-polling PullWork calls (work-signal.ts): one waiter per job, and a replica's
 * own wake-ups handed on when no waiter here takes them, at once or once a woken waiter leaves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import { makeWorkSignal } from "./work-signal.ts"

describe("work signal", () => {
  const recording = () => {
    const handedOn: Array<readonly [string, number]> = []
    return { handedOn, signal: makeWorkSignal((tenantId, count) => handedOn.push([tenantId, count])) }
  }

  it.effect("a pending job wakes one waiter of its tenant; what finds no waiter here is handed on", () =>
    Effect.gen(function* () {
      const { handedOn, signal } = recording()
      const scopes = yield* Effect.forEach([1, 2], () => Scope.make())
      const wakes = yield* Effect.forEach(scopes, (scope) => Scope.extend(signal.awaitWork("a"), scope))
      const fibers = yield* Effect.forEach(wakes, (wake) => Effect.fork(wake))
      signal.notifyOwned("a", 1)
      yield* Fiber.join(fibers[0] as Fiber.RuntimeFiber<void>)
      expect(Option.isNone(yield* Fiber.poll(fibers[1] as Fiber.RuntimeFiber<void>))).toBe(true)
      expect(signal.waiting()).toBe(1)
      // Three more: the second waiter takes one, two are handed on; another tenant's too.
      signal.notifyOwned("a", 3)
      signal.notifyOwned("b", 1)
      yield* Fiber.join(fibers[1] as Fiber.RuntimeFiber<void>)
      expect(handedOn).toEqual([
        ["a", 2],
        ["b", 1]
      ])
      // Wake-ups every replica got are not handed on.
      signal.notify("a", 1)
      signal.notifyTenant("a")
      expect(handedOn).toHaveLength(2)
      for (const scope of scopes) yield* Scope.close(scope, Exit.void)
    })
  )

  it.effect("a woken waiter that leaves unused passes its wake-up on: to a waiter here, else to the others", () =>
    Effect.gen(function* () {
      const { handedOn, signal } = recording()
      const [leaving, staying] = yield* Effect.forEach([1, 2], () => Scope.make())
      if (leaving === undefined || staying === undefined) throw new Error("no scopes")
      yield* Scope.extend(signal.awaitWork("a"), leaving)
      const second = yield* Effect.fork(yield* Scope.extend(signal.awaitWork("a"), staying))
      signal.notifyOwned("a", 1)
      // Woken, but its call ends before it saw the wake-up (a claim found other work first).
      yield* Scope.close(leaving, Exit.void)
      yield* Fiber.join(second)
      expect(handedOn).toEqual([])
      // Now no waiter is left to pass it to: it goes to the other replicas.
      const third = yield* Scope.make()
      yield* Scope.extend(signal.awaitWork("a"), third)
      signal.notifyOwned("a", 1)
      yield* Scope.close(third, Exit.void)
      yield* Scope.close(staying, Exit.void)
      expect(handedOn).toEqual([["a", 1]])
      // A waiter woken by a wake-up every replica got passes it on here only.
      const fourth = yield* Scope.make()
      yield* Scope.extend(signal.awaitWork("a"), fourth)
      signal.notify("a", 1)
      yield* Scope.close(fourth, Exit.void)
      expect(handedOn).toEqual([["a", 1]])
      expect(signal.waiting()).toBe(0)
    })
  )
})
