/**
 * A corrupt job store is never silently emptied or reported ready (issue 11.4), on the compiled
 * controller: an empty file, a file that is not a database and a database with a damaged page
 * each stop the start with exit 1 and a message naming the file; a first start creates the store
 * under a temporary name, so nothing but the finished store ever sits at SVC_STORE_PATH; readiness
 * turns 503 when the store fails under a running controller.
 */
import { Database } from "bun:sqlite"
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { modelDirEnv, requireBuilt, runCommand, startService } from "../../local/executables.ts"
import { Scratch } from "./controller-support.ts"

const scratch = new Scratch()
afterAll(() => scratch.remove())

/** The store path as it appears inside a JSON log line. */
const named = (store: string) => JSON.stringify(`"${store}"`).slice(1, -1)

const start = (store: string) =>
  runCommand([requireBuilt("svc-controller")], {
    env: {
      SVC_HTTP_ADDR: "127.0.0.1:0",
      SVC_GRPC_ADDR: "127.0.0.1:0",
      ...modelDirEnv,
      SVC_AUTH_DISABLED: "true",
      SVC_SCORING_ROOTS: scratch.rootA,
      SVC_STORE_PATH: store
    }
  })

describe("job store integrity at start-up", () => {
  it("refuses an empty store file: exit 1 naming it, the file left as it was", async () => {
    const store = scratch.path("empty.sqlite")
    writeFileSync(store, "")
    const result = await start(store)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`cannot open the job store ${named(store)}: is empty, not a job store`)
    expect(statSync(store).size).toBe(0)
  })

  it("refuses a file that is not a database", async () => {
    const store = scratch.path("text.sqlite")
    writeFileSync(store, "these are not the jobs you are looking for\n".repeat(200))
    const result = await start(store)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`cannot open the job store ${named(store)}: is not an SQLite database`)
  })

  it("refuses a database with a damaged page (integrity check)", async () => {
    const store = scratch.path("damaged.sqlite")
    const db = new Database(store, { create: true })
    db.run("PRAGMA page_size = 4096")
    db.run("CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT)")
    db.run("CREATE INDEX filler_text ON filler (text)")
    const insert = db.prepare("INSERT INTO filler (text) VALUES (?)")
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${"x".repeat(100)}`)
    })()
    db.close()
    // Random bytes over a page in the middle of the file, header intact.
    const bytes = readFileSync(store)
    const page = Math.floor(bytes.length / 4096 / 2) * 4096
    for (let i = 0; i < 4096; i++) bytes[page + i] = (i * 131 + 17) & 0xff
    writeFileSync(store, bytes)
    const result = await start(store)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`cannot open the job store ${named(store)}`)
    expect(result.stderr).toMatch(/integrity check failed|malformed|corrupt/i)
  })

  it("creates a new store under a temporary name and renames it into place", async () => {
    const dir = scratch.path("fresh")
    const store = `${dir}/jobs.sqlite`
    await runCommand(["mkdir", "-p", dir])
    const controller = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: scratch.rootA, SVC_STORE_PATH: store },
      listeners: ["http", "grpc"]
    })
    try {
      expect(existsSync(store)).toBe(true)
      expect(readdirSync(dir).filter((name) => name.includes(".creating-"))).toEqual([])
      const ready = await fetch(`${controller.http}/readyz`)
      expect(ready.status).toBe(200)
    } finally {
      await controller.stop()
    }
    // The store it made opens again.
    const again = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: scratch.rootA, SVC_STORE_PATH: store },
      listeners: ["http", "grpc"]
    })
    await again.stop()
  })

  it("readiness reflects a store that fails at run time", async () => {
    const store = scratch.path("runtime.sqlite")
    const controller = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: scratch.rootA, SVC_STORE_PATH: store },
      listeners: ["http", "grpc"]
    })
    try {
      expect((await fetch(`${controller.http}/readyz`)).status).toBe(200)
      // The file is cut under the running controller (a full disk, a bad restore, a wrong volume).
      truncateSync(store, 0)
      const ready = await fetch(`${controller.http}/readyz`)
      expect(ready.status).toBe(503)
      expect(((await ready.json()) as { reason: string }).reason).toMatch(/^job store failing: /)
    } finally {
      await controller.stop()
    }
  })
})
