/**
 * Several controller replicas on one PostgreSQL database, end to end on the compiled executables:
 * two svc-controller replicas, three svc-nodes (each starting on a different replica, with the
 * other as fail-over), 200 jobs of two tenants submitted through both replicas. Mid-run one
 * replica is killed with SIGKILL and PostgreSQL itself is crashed (calls answer UNAVAILABLE and
 * readiness fails meanwhile) and restarted: every
 * acknowledged job still finishes, exactly once, and each tenant sees only its own jobs.
 * The clips are tiny (two 320x240 frames of a golden fixture, as Y4M written by the test).
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openSync, readSync, closeSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../local/postgres-server.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import {
  ControllerClient,
  controllerEnv,
  expectOk,
  freePort,
  IdentityProviders,
  makeTokens,
  Scratch,
  startController,
  type Tokens,
  tenantsDocument,
  v01,
  waitFor
} from "./controller-support.ts"

const JOBS_PER_TENANT = 100
const FRAME_BYTES = 320 * 240 * 1.5

/** The first `frames` frames of a raw 320x240 4:2:0 file as a Y4M clip. */
const writeY4m = (source: string, target: string, frames: number) => {
  const fd = openSync(source, "r")
  const parts: Array<Buffer> = [Buffer.from("YUV4MPEG2 W320 H240 F25:1 Ip A1:1 C420jpeg\n")]
  for (let frame = 0; frame < frames; frame++) {
    const data = Buffer.alloc(FRAME_BYTES)
    readSync(fd, data, 0, FRAME_BYTES, frame * FRAME_BYTES)
    parts.push(Buffer.from("FRAME\n"), data)
  }
  closeSync(fd)
  writeFileSync(target, Buffer.concat(parts))
}

describe.skipIf(!postgresAvailable())("controller replicas on PostgreSQL", () => {
  const scratch = new Scratch()
  const idp = new IdentityProviders()
  let tokens: Tokens
  let pg: PostgresServer
  let env: (http: string, grpc: string) => Record<string, string>
  const controllers: Array<RunningService> = []
  const nodes: Array<RunningService> = []
  let addresses: Array<string> = []

  beforeAll(async () => {
    tokens = await makeTokens(idp)
    scratch.write("tenants.json", tenantsDocument(idp, scratch))
    for (const [root, name] of [
      [scratch.rootA, "a"],
      [scratch.rootB, "b"]
    ] as const) {
      writeY4m(v01.reference, join(root, `${name}.ref.y4m`), 2)
      writeY4m(v01.distorted, join(root, `${name}.dis.y4m`), 2)
    }
    // Durable settings (fsync on): the crash of PostgreSQL below must lose nothing committed.
    pg = await startPostgres({ durable: true })
    await pg.createDatabase("svc")
    env = (http, grpc) =>
      controllerEnv(scratch, {
        SVC_STORE_URL: pg.url("svc"),
        SVC_STORE_PASSWORD_FILE: pg.passwordFile,
        SVC_STORE_POOL_MAX: "8",
        SVC_HTTP_ADDR: http,
        SVC_GRPC_ADDR: grpc
      })
    addresses = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`]
    // Both replicas start at once: the migrations run once, under the advisory lock.
    controllers.push(
      ...(await Promise.all(addresses.map(async (grpc) => startController(env(`127.0.0.1:${await freePort()}`, grpc)))))
    )
    const [one, two] = addresses
    const startNode = (token: string, name: string, controllerList: string) =>
      startService("svc-node", {
        env: {
          SVC_CONTROLLER_ADDR: controllerList,
          SVC_CONTROLLER_TOKEN_FILE: scratch.write(`${name}.token`, token),
          SVC_NODE_NAME: name,
          SVC_NODE_SLOTS: "2",
          SVC_NODE_POLL_INTERVAL_MS: "100",
          SVC_LOG_LEVEL: "info"
        }
      })
    nodes.push(
      ...(await Promise.all([
        startNode(tokens.aNode, "node-a1", `${one},${two}`),
        startNode(tokens.aNode, "node-a2", `${two},${one}`),
        startNode(tokens.bNode, "node-b1", `${one},${two}`)
      ]))
    )
  }, 120_000)

  afterAll(async () => {
    for (const service of [...nodes, ...controllers]) await service.stop().catch(() => undefined)
    pg?.stop()
    idp.stop()
    scratch.remove()
  })

  it("200 jobs of two tenants through two replicas finish exactly once across a replica kill -9 and a database crash", async () => {
    const clients = addresses.map((address) => new ControllerClient(address))
    const [first, second] = clients
    if (first === undefined || second === undefined) throw new Error("two clients expected")
    const submitted = { a: [] as Array<string>, b: [] as Array<string> }
    for (let i = 0; i < JOBS_PER_TENANT; i++) {
      for (const tenant of ["a", "b"] as const) {
        const root = tenant === "a" ? scratch.rootA : scratch.rootB
        const writerToken = tenant === "a" ? tokens.aWriter : tokens.bWriter
        const via = i % 2 === 0 ? first : second
        const job = expectOk(
          await via.submit(
            { reference: join(root, `${tenant}.ref.y4m`), distorted: join(root, `${tenant}.dis.y4m`) },
            writerToken
          )
        )
        submitted[tenant].push(String(job.id))
      }
    }
    const finishedCount = async (client: ControllerClient) => {
      let count = 0
      for (const [token, tenant] of [
        [tokens.aReader, "a"],
        [tokens.bReader, "b"]
      ] as const) {
        const listed = await client.streamJobs({ states: ["JOB_STATE_FINISHED"], follow: false, limit: 0 }, token)
        if (!listed.ok) return undefined
        for (const job of listed.value) expect(job.tenant_id).toBe(tenant)
        count += listed.value.length
      }
      return count
    }
    await waitFor(async () => ((await finishedCount(second)) ?? 0) >= 40 || undefined, 180_000, "40 jobs finished")

    // Replica one dies: its nodes (a1, b1) fail over to replica two and carry on.
    expect(await controllers[0]?.stop("SIGKILL")).not.toBe(0)
    await waitFor(async () => ((await finishedCount(second)) ?? 0) >= 110 || undefined, 180_000, "110 jobs finished")

    // PostgreSQL crashes (immediate stop: no checkpoint). Meanwhile calls answer UNAVAILABLE with
    // a clear message and readiness fails; then it comes back on the same data.
    pg.stopOnly("immediate")
    // The replica's answer (not a reset of this test's own connection, seen now and then under
    // load right after the database stops: the call is then made again).
    const refused = await waitFor(
      async () => {
        const outcome = await second.submit(
          { reference: join(scratch.rootA, "a.ref.y4m"), distorted: join(scratch.rootA, "a.dis.y4m") },
          tokens.aWriter
        )
        return outcome.ok || outcome.details.startsWith("job store") ? outcome : undefined
      },
      30_000,
      "the replica's answer while the database is down"
    )
    expect(refused).toMatchObject({ ok: false, code: grpc.status.UNAVAILABLE })
    expect(refused.ok ? "" : refused.details).toMatch(/^job store unavailable: /)
    const ready = await fetch(`${controllers[1]?.http}/readyz`)
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as { readonly reason: string }).reason).toMatch(/job store unavailable/)
    pg.start()
    await waitFor(
      async () => ((await finishedCount(second)) ?? 0) === 2 * JOBS_PER_TENANT || undefined,
      240_000,
      "every job finished"
    )

    // Each tenant sees exactly its own 100 jobs, all finished with a score.
    for (const [tenant, token] of [
      ["a", tokens.aReader],
      ["b", tokens.bReader]
    ] as const) {
      const listed = expectOk(await second.streamJobs({ states: [], follow: false, limit: 0 }, token))
      expect(new Set(listed.map((job) => String(job.id)))).toEqual(new Set(submitted[tenant]))
      for (const job of listed) {
        expect(job.tenant_id).toBe(tenant)
        expect(job.state).toBe("JOB_STATE_FINISHED")
        expect(typeof (job.result as { readonly score?: unknown } | null)?.score).toBe("number")
      }
    }
    // No job was scored twice: one "job finished" line per job over all nodes.
    const scored = nodes.flatMap((node) =>
      node.logs.filter((line) => line.message === "job finished").map((line) => String(line.annotations["job_id"]))
    )
    expect(scored.length).toBe(2 * JOBS_PER_TENANT)
    expect(new Set(scored).size).toBe(2 * JOBS_PER_TENANT)
    // The nodes of the killed replica moved to the other one.
    for (const node of [nodes[0], nodes[2]]) {
      expect(node?.logs.some((line) => line.message.includes("failing over"))).toBe(true)
    }
    for (const client of clients) client.close()
  }, 600_000)
})
