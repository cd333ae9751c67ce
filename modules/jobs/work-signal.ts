/**
 * Wake-ups of long-polling PullWork calls: a waiter per call, queued by tenant, and one waiter
 * woken per job that became pending (a submit or re-queue). Waking one instead of all keeps a
 * submit from turning into one claim per waiting node, of which all but one would come back
 * empty. A waiter that was woken but leaves without using the wake (its claim before the wait
 * found other work) passes it on to the next waiter, so no pending job is left to a timeout.
 *
 * With several replicas (PostgreSQL), the wake-up of a pending job is owned by one replica (the
 * one whose statement made it pending, see postgres/store.ts): `notifyOwned` wakes its waiters
 * and gives every wake-up it has no waiter for to `handOn`, which passes it to the other replicas;
 * so is an owned wake-up whose waiter left without using it and found no waiter to pass it to.
 */
import { Deferred, Effect, FiberId, type Scope } from "effect"

export interface WorkSignal {
  /** `count` jobs of the tenant may have become pending: wake as many waiters (if there are). */
  readonly notify: (tenantId: string, count: number) => void
  /**
   * `count` jobs of the tenant became pending and no other replica wakes anyone for them: wake
   * as many waiters, and hand on the wake-ups no waiter here takes (now or once woken).
   */
  readonly notifyOwned: (tenantId: string, count: number) => void
  /**
   * Every waiter of the tenant: a job handed back for want of memory, which the first waiter
   * woken may skip (its node has less free), must reach a node that has the room.
   */
  readonly notifyTenant: (tenantId: string) => void
  /** Every waiter (changes may have been missed: the claims find out). */
  readonly notifyAll: () => void
  /** How many waiters there are (the PostgreSQL store listens for changes while there are any). */
  readonly waiting: () => number
  /** Subscribes when run; the returned effect completes at the waiter's wake-up. */
  readonly awaitWork: (tenantId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
}

interface Waiter {
  readonly woken: Deferred.Deferred<void>
  used: boolean
  /** Woken by an owned wake-up: handed on if it goes unused and no waiter here takes it. */
  owned: boolean
}

/** `handOn(tenantId, count)`: owned wake-ups no waiter here took (none by default: one replica). */
export const makeWorkSignal = (handOn: (tenantId: string, count: number) => void = () => undefined): WorkSignal => {
  const queues = new Map<string, Array<Waiter>>()
  let count = 0

  const remove = (tenantId: string, waiter: Waiter) => {
    const queue = queues.get(tenantId)
    if (queue === undefined) return
    const index = queue.indexOf(waiter)
    if (index < 0) return
    queue.splice(index, 1)
    count -= 1
    if (queue.length === 0) queues.delete(tenantId)
  }

  /** Wakes up to `jobs` waiters of the tenant; returns how many wake-ups found no waiter. */
  const wake = (tenantId: string, jobs: number, owned: boolean): number => {
    for (let woken = 0; woken < jobs; woken++) {
      const waiter = queues.get(tenantId)?.[0]
      if (waiter === undefined) return jobs - woken
      remove(tenantId, waiter)
      waiter.owned = owned
      Deferred.unsafeDone(waiter.woken, Effect.void)
    }
    return 0
  }

  const notifyOwned = (tenantId: string, jobs: number) => {
    const left = wake(tenantId, jobs, true)
    if (left > 0) handOn(tenantId, left)
  }

  return {
    notify: (tenantId, jobs) => {
      wake(tenantId, jobs, false)
    },
    notifyOwned,
    notifyTenant: (tenantId) => {
      wake(tenantId, queues.get(tenantId)?.length ?? 0, false)
    },
    notifyAll: () => {
      for (const [tenantId, queue] of [...queues]) wake(tenantId, queue.length, false)
    },
    waiting: () => count,
    awaitWork: (tenantId) =>
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => {
            const waiter: Waiter = { woken: Deferred.unsafeMake<void>(FiberId.none), used: false, owned: false }
            const queue = queues.get(tenantId) ?? []
            queue.push(waiter)
            queues.set(tenantId, queue)
            count += 1
            return waiter
          }),
          (waiter) =>
            Effect.flatMap(Deferred.isDone(waiter.woken), (done) =>
              Effect.sync(() => {
                if (!done) remove(tenantId, waiter)
                else if (!waiter.used) {
                  if (waiter.owned) notifyOwned(tenantId, 1)
                  else wake(tenantId, 1, false)
                }
              })
            )
        ),
        (waiter) =>
          Effect.zipRight(
            Deferred.await(waiter.woken),
            Effect.sync(() => {
              waiter.used = true
            })
          )
      )
  }
}
