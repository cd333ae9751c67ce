/**
 * Decoders inside the walls on the controller and the node (issue 27), compiled executables: no
 * ffmpeg child is alive a second after kill -9 of the controller mid-score or of the node
 * mid-job; the node holds jobs to the same memory budget, decoders included (a job whose decoder
 * can never fit fails with the reason, before anything is decoded).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, type RunningService, startService } from "../../local/executables.ts"
import { childrenNamed, writeLongClip } from "../support/media.ts"
import {
  ControllerClient,
  controllerEnv,
  expectOk,
  IdentityProviders,
  jobInState,
  makeTokens,
  postScore,
  Scratch,
  startController,
  type Tokens,
  tenantsDocument
} from "./controller-support.ts"

/** Still alive (not gone, not a zombie waiting for its reaper). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** The ffmpeg children of `parent` once at least `count` run (up to a minute on a loaded host). */
const decodersOf = async (parent: number, count: number) => {
  let decoders: ReadonlyArray<number> = []
  for (let waited = 0; decoders.length < count && waited < 600; waited++) {
    await Bun.sleep(100)
    decoders = childrenNamed(parent, "ffmpeg")
  }
  return decoders
}

const startNodeWith = (scratch: Scratch, controllerGrpc: string, token: string, env: Record<string, string> = {}) =>
  startService("svc-node", {
    env: {
      SVC_CONTROLLER_ADDR: controllerGrpc,
      SVC_CONTROLLER_TOKEN_FILE: scratch.write("node.token", token),
      SVC_NODE_NAME: "node-a",
      SVC_NODE_POLL_INTERVAL_MS: "100",
      SVC_LOG_LEVEL: "info",
      ...env
    }
  })

describe("decoders on the controller and the node", () => {
  const scratch = new Scratch()
  const idp = new IdentityProviders()
  let tokens: Tokens
  let long = ""

  beforeAll(async () => {
    tokens = await makeTokens(idp)
    scratch.write("tenants.json", tenantsDocument(idp, scratch))
    long = join(scratch.rootA, "long.mp4")
    writeLongClip(long)
  }, 120_000)

  afterAll(() => {
    idp.stop()
    scratch.remove()
  })

  it("kill -9 of the controller mid-score: no ffmpeg child is alive a second later", async () => {
    const controller = await startController(controllerEnv(scratch, { SVC_STORE_PATH: scratch.path("c1.sqlite") }))
    const answer = postScore(controller.http, { reference: long, distorted: long }, tokens.aWriter).catch(
      () => undefined
    )
    const decoders = await decodersOf(controller.process.pid, 2)
    expect(decoders.length).toBe(2)
    controller.process.kill("SIGKILL")
    await controller.stop()
    await answer
    await Bun.sleep(1000)
    expect(decoders.filter(alive)).toEqual([])
  })

  describe("with a node", () => {
    let controller: RunningService
    let client: ControllerClient
    beforeAll(async () => {
      controller = await startController(controllerEnv(scratch, { SVC_STORE_PATH: scratch.path("c2.sqlite") }))
      client = new ControllerClient(controller.grpc ?? "")
    })
    afterAll(async () => {
      client?.close()
      await controller?.stop()
    })

    it("kill -9 of the node mid-job: no ffmpeg child is alive a second later", async () => {
      const node = await startNodeWith(scratch, controller.grpc ?? "", tokens.aNode)
      expectOk(await client.submit({ reference: long, distorted: long }, tokens.aWriter))
      const decoders = await decodersOf(node.process.pid, 2)
      expect(decoders.length).toBe(2)
      node.process.kill("SIGKILL")
      await node.stop()
      await Bun.sleep(1000)
      expect(decoders.filter(alive)).toEqual([])
    })

    it("the node's memory budget counts decoders: a 16000x16000 input fails with the reason, nothing decoded", async () => {
      const huge = join(scratch.rootA, "huge.mp4")
      writeFileSync(huge, gunzipSync(readFileSync(join(repoRoot, "test", "media", "gray-16000x16000.mp4.gz"))))
      const node = await startNodeWith(scratch, controller.grpc ?? "", tokens.aNode, { SVC_MAX_SCORE_MEMORY: "256Mi" })
      try {
        const submitted = expectOk(await client.submit({ reference: long, distorted: huge }, tokens.aWriter))
        const failed = await jobInState(client, String(submitted.id), tokens.aReader, "JOB_STATE_FAILED")
        expect(String(failed.error)).toMatch(/needs about .* more than the whole budget of 256\.0 MiB/)
      } finally {
        await node.stop()
      }
    })
  })
})
