/** Settings of the job store, read with Effect Config (refusals name the variable). */
import type { Config } from "effect"
import { text } from "../config/env.ts"

export const STORE_PATH_VARIABLE = "SVC_STORE_PATH"
export const DEFAULT_STORE_PATH = "/data/jobs.sqlite"

/** Path of the SQLite job store file; its directory must exist and be writable. */
export const storePath: Config.Config<string> = text(STORE_PATH_VARIABLE, DEFAULT_STORE_PATH)
