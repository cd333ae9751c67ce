/**
 * The job states by their short names (the store's, the CLI's `--state`, MCP's), each with its
 * svc.v1 `JobState` enum name: the one table the controller, cli and mcp translate through.
 */
import type { JobState } from "./svc-v1.ts"

/** The short names, pending first and the final states last (the order help texts list them in). */
export const SHORT_JOB_STATES = ["pending", "running", "finished", "cancelled", "failed"] as const

export type ShortJobState = (typeof SHORT_JOB_STATES)[number]

type WireName<State extends ShortJobState> = `JOB_STATE_${Uppercase<State>}`

/** Short name → enum name; the type check fails if a short name has no enum value in the proto. */
export const WIRE_JOB_STATES = Object.fromEntries(
  SHORT_JOB_STATES.map((state) => [state, `JOB_STATE_${state.toUpperCase()}`])
) as { readonly [State in ShortJobState]: WireName<State> } satisfies Readonly<Record<ShortJobState, JobState>>

/** An enum name as shown to people: `JOB_STATE_RUNNING` → `running`. */
export const shortJobState = (state: string): string => state.replace(/^JOB_STATE_/, "").toLowerCase()
