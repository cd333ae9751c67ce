// Digests for the report's `image` section (svc_sha256: the executable's own sha256).
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"

/** sha256 (lowercase hex) of a file's bytes, or null when it cannot be read. */
export const fileSha256 = (path: string): Effect.Effect<string | null> =>
  Effect.tryPromise(() => readFile(path)).pipe(
    Effect.map((bytes) => createHash("sha256").update(bytes).digest("hex")),
    Effect.orElseSucceed(() => null)
  )
