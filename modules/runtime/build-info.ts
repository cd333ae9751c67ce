/**
 * Identity of this build: the package version and the git commit it was compiled from.
 * `scripts/build.ts` passes the commit with `bun build --define`; from source it is "dev".
 */
import packageJson from "../../package.json" with { type: "json" }

declare const SVC_BUILD_COMMIT: string | undefined

export const buildInfo = {
  version: packageJson.version,
  commit: typeof SVC_BUILD_COMMIT === "string" ? SVC_BUILD_COMMIT : "dev"
} as const

/** The one line `--version` prints: `svc-<name> <semver> (<git commit>)`. */
export const versionLine = (executable: string): string => `${executable} ${buildInfo.version} (${buildInfo.commit})`
