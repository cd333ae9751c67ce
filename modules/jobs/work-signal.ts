/**
 * Wake-ups of long-polling PullWork calls: a waiter per call, queued by tenant, and one waiter
 * woken per job that became pending (a submit or re-queue). Waking one instead of all keeps a
 * submit from turning into one claim per waiting node, of which all but one would come back
 * empty. A waiter that was woken but leaves without using the wake (its claim before the wait
 * found other work) passes it on to the next waiter, so no pending job is left to a timeout.
 *
 * It also knows when a claim would find nothing: a claim that came back short (the queue empty
 * when it ran) leaves its tenant idle until the next wake-up of that tenant, so a node asking
 * again (as it does after each report) waits at once instead of sending a claim that finds
 * nothing (profiled: most claims under mixed load were those). Anything that may have missed a
 * wake-up (`forget`: the PostgreSQL store starting or stopping to listen, a lost LISTEN
 * connection) ends every tenant's idleness.
 */
import { Deferred, Effect, FiberId, type Scope } from "effect"

/** A subscribed waiter of one PullWork call. */
export interface WorkWait {
  /** Completes at the waiter's wake-up. */
  readonly woken: Effect.Effect<void>
  /**
   * Whether no job of the tenant may have become pending since a claim (begun after this
   * waiter's subscription or an earlier one's) found none: a claim now would find none either.
   */
  readonly idle: () => boolean
  /** This waiter's claim came back short: the tenant is idle until its next wake-up. */
  readonly drained: () => void
}

export interface WorkSignal {
  /** `count` jobs of the tenant may have become pending: wake as many waiters. */
  readonly notify: (tenantId: string, count: number) => void
  /** Every waiter (changes may have been missed: the claims find out); no tenant is idle. */
  readonly notifyAll: () => void
  /** Wake-ups may have been missed (not listening, or starting to): no tenant is idle. */
  readonly forget: () => void
  /** How many waiters there are (the PostgreSQL store listens for changes while there are any). */
  readonly waiting: () => number
  /** Subscribes when run; the wait ends with the scope. */
  readonly awaitWork: (tenantId: string) => Effect.Effect<WorkWait, never, Scope.Scope>
}

interface Waiter {
  readonly woken: Deferred.Deferred<void>
  used: boolean
}

export const makeWorkSignal = (): WorkSignal => {
  const queues = new Map<string, Array<Waiter>>()
  let count = 0
  // A tenant's mark changes at each of its wake-ups and at each `forget`; `idleAt` holds the mark
  // at which a claim found a tenant's queue empty.
  let epoch = 0
  const wakeUps = new Map<string, number>()
  const idleAt = new Map<string, string>()
  const markOf = (tenantId: string) => `${epoch}/${wakeUps.get(tenantId) ?? 0}`

  const remove = (tenantId: string, waiter: Waiter) => {
    const queue = queues.get(tenantId)
    if (queue === undefined) return
    const index = queue.indexOf(waiter)
    if (index < 0) return
    queue.splice(index, 1)
    count -= 1
    if (queue.length === 0) queues.delete(tenantId)
  }

  const wake = (tenantId: string, jobs: number) => {
    for (let woken = 0; woken < jobs; woken++) {
      const waiter = queues.get(tenantId)?.[0]
      if (waiter === undefined) return
      remove(tenantId, waiter)
      Deferred.unsafeDone(waiter.woken, Effect.void)
    }
  }

  const forget = () => {
    epoch += 1
    wakeUps.clear()
    idleAt.clear()
  }

  return {
    notify: (tenantId, jobs) => {
      if (jobs <= 0) return
      wakeUps.set(tenantId, (wakeUps.get(tenantId) ?? 0) + 1)
      idleAt.delete(tenantId)
      wake(tenantId, jobs)
    },
    notifyAll: () => {
      forget()
      for (const [tenantId, queue] of [...queues]) wake(tenantId, queue.length)
    },
    forget,
    waiting: () => count,
    awaitWork: (tenantId) =>
      Effect.map(
        Effect.acquireRelease(
          Effect.sync(() => {
            const waiter: Waiter = { woken: Deferred.unsafeMake<void>(FiberId.none), used: false }
            const queue = queues.get(tenantId) ?? []
            queue.push(waiter)
            queues.set(tenantId, queue)
            count += 1
            return { waiter, mark: markOf(tenantId) }
          }),
          ({ waiter }) =>
            Effect.flatMap(Deferred.isDone(waiter.woken), (done) =>
              Effect.sync(() => {
                if (!done) remove(tenantId, waiter)
                else if (!waiter.used) wake(tenantId, 1)
              })
            )
        ),
        ({ waiter, mark }): WorkWait => ({
          woken: Effect.zipRight(
            Deferred.await(waiter.woken),
            Effect.sync(() => {
              waiter.used = true
            })
          ),
          idle: () => idleAt.get(tenantId) === markOf(tenantId),
          // The mark of the subscription, which came before the claim: a wake-up between the
          // two changed the tenant's mark, so the claim's emptiness is not trusted.
          drained: () => {
            if (mark === markOf(tenantId)) idleAt.set(tenantId, mark)
          }
        })
      )
  }
}
