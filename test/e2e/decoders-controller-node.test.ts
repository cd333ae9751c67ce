/**
 * Decoders inside the walls on the controller and the node (issue 27), compiled executables: no
 * ffmpeg child is alive a second after kill -9 of the controller mid-score or of the node
 * mid-job; the node holds jobs to the same memory budget, decoders included (a job whose decoder
 * can never fit fails with the reason, before anything is decoded; one that does not fit beside
 * the node's score in flight is handed back with its need, pending, not held, and not pulled again
 * until the node has that much memory free); a segment job's segments are admitted the same way.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, type RunningService, startService } from "../../local/executables.ts"
import { childrenNamed, writeLongClip } from "../support/media.ts"
import { bits, type JobView } from "./segments-support.ts"
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
  tenantsDocument,
  waitFor
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
    await writeLongClip(long)
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
        // A segment job's plan is admitted too: it fails with the reason before any segment is cut.
        const split = { reference: long, distorted: huge, options: { segment_frames: 500 } }
        const planned = expectOk(await client.submit(split, tokens.aWriter))
        const refused = await jobInState(client, String(planned.id), tokens.aReader, "JOB_STATE_FAILED")
        expect(String(refused.error)).toMatch(/needs about .* more than the whole budget of 256\.0 MiB/)
        expect(refused.segments).toEqual([])
      } finally {
        await node.stop()
      }
    })

    it("a segment is admitted as a job is: one that can never fit the node's budget fails its job with the reason", async () => {
      // The plan (frame counting: a packet counter per input, a decoder's base each) fits in
      // 100 MiB; each 500-frame segment's two decoders and scorer need more, so the first segment
      // scored fails the job, naming the need.
      const node = await startNodeWith(scratch, controller.grpc ?? "", tokens.aNode, { SVC_MAX_SCORE_MEMORY: "100Mi" })
      try {
        const submitted = expectOk(
          await client.submit({ reference: long, distorted: long, options: { segment_frames: 500 } }, tokens.aWriter)
        )
        const failed = await jobInState(client, String(submitted.id), tokens.aReader, "JOB_STATE_FAILED")
        expect(String(failed.error)).toMatch(/^segment \d: .*needs about .* more than the whole budget of 100\.0 MiB/)
        expect((failed.segments as ReadonlyArray<unknown>).length).toBe(3)
        expect(node.logs.some((line) => /segment \d failed: .*more than the whole budget/.test(line.message))).toBe(
          true
        )
      } finally {
        await node.stop()
      }
    })
  })
  describe("a job that does not fit beside the node's score in flight", () => {
    let controller: RunningService
    let client: ControllerClient
    const nodes: Array<RunningService> = []
    /** The node whose budget has room for one score of the long clip, not two (found by the first test). */
    let roomForOne: RunningService | undefined
    beforeAll(async () => {
      controller = await startController(controllerEnv(scratch, { SVC_STORE_PATH: scratch.path("c3.sqlite") }))
      client = new ControllerClient(controller.grpc ?? "")
    })
    afterAll(async () => {
      for (const node of nodes) await node.stop()
      client?.close()
      await controller?.stop()
    })

    it("is handed back with its need, not pulled again while the node lacks the memory, scored once it is free", async () => {
      // A budget with room for one score of the long clip, not two: raised by half over each
      // refusal's "needs about" (the first names only a decoder's share) until the score is admitted.
      let budgetMiB = 1
      let small: RunningService | undefined
      let first: Record<string, unknown> = {}
      for (let tries = 0; small === undefined && tries < 5; tries++) {
        const node = await startNodeWith(scratch, controller.grpc ?? "", tokens.aNode, {
          SVC_MAX_SCORE_MEMORY: `${budgetMiB}Mi`,
          SVC_NODE_SLOTS: "2",
          SVC_NODE_NAME: "small"
        })
        nodes.push(node)
        first = expectOk(await client.submit({ reference: long, distorted: long }, tokens.aWriter))
        const outcome = await waitFor(
          async () => {
            const job = expectOk(await client.getJob(String(first.id), tokens.aReader))
            if (job.state === "JOB_STATE_FAILED") return String(job.error)
            return childrenNamed(node.process.pid, "ffmpeg").length >= 2 ? "admitted" : undefined
          },
          120_000,
          "the first job to be admitted or refused"
        )
        if (outcome === "admitted") small = node
        else {
          await node.stop()
          const needed = /needs about ([\d.]+) (MiB|GiB)/.exec(outcome)
          expect(needed).not.toBeNull()
          budgetMiB = Math.ceil(Number(needed?.[1]) * (needed?.[2] === "GiB" ? 1024 : 1) * 1.5)
        }
      }
      if (small === undefined) throw new Error(`no budget up to ${budgetMiB} MiB admitted the first score`)
      roomForOne = small
      const firstRunning = expectOk(await client.getJob(String(first.id), tokens.aReader))
      expect(firstRunning.state).toBe("JOB_STATE_RUNNING")

      // The second job (told apart by its own copy of the clip) is pulled into small's free slot,
      // found not to fit now, and handed back: running on small, then pending again.
      const secondInput = join(scratch.rootA, "long-second.mp4")
      copyFileSync(long, secondInput)
      const isSecond = (job: Record<string, unknown>) =>
        (job.request as { readonly distorted?: string } | null)?.distorted === secondInput
      let claimedBySmall = false
      const handedBack = client.followJobs(tokens.aReader, (job) => {
        if (!isSecond(job)) return false
        if (job.state === "JOB_STATE_RUNNING" && job.node_id === firstRunning.node_id) claimedBySmall = true
        return claimedBySmall && job.state === "JOB_STATE_PENDING"
      })
      const second = expectOk(await client.submit({ reference: long, distorted: secondInput }, tokens.aWriter))
      const seen = (await handedBack).filter(isSecond)
      expect(seen.at(-1)).toMatchObject({ id: second.id, state: "JOB_STATE_PENDING", node_id: "" })
      expect(small.logs.some((line) => line.message.includes(`job ${String(second.id)} does not fit`))).toBe(true)

      // small goes on pulling (its free slot), saying how much memory is free: a newer job is
      // claimed (and handed back in turn, not fitting either) while the second, older but
      // recorded as needing more than is free, is skipped.
      const thirdInput = join(scratch.rootA, "long-third.mp4")
      copyFileSync(long, thirdInput)
      const isThird = (job: Record<string, unknown>) =>
        (job.request as { readonly distorted?: string } | null)?.distorted === thirdInput
      let thirdClaimed = false
      const thirdHandedBack = client.followJobs(tokens.aReader, (job) => {
        if (!isThird(job)) return false
        if (job.state === "JOB_STATE_RUNNING" && job.node_id === firstRunning.node_id) thirdClaimed = true
        return thirdClaimed && job.state === "JOB_STATE_PENDING"
      })
      const third = expectOk(await client.submit({ reference: long, distorted: thirdInput }, tokens.aWriter))
      const meanwhile = await thirdHandedBack
      expect(meanwhile.filter((job) => isSecond(job) && job.state !== "JOB_STATE_PENDING")).toEqual([])
      expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id: third.id }, tokens.aWriter))

      // Once the first score gives its memory back (cancelled here), small's next PullWork says
      // so and gets the second job: scored there, after no second hand-back.
      const scored = client.followJobs(tokens.aReader, (job) => isSecond(job) && job.state === "JOB_STATE_FINISHED")
      expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id: first.id }, tokens.aWriter))
      const events = await scored
      const firstCancelled = events.findIndex((job) => job.id === first.id && job.state === "JOB_STATE_CANCELLED")
      const secondClaims = events.flatMap((job, index) =>
        isSecond(job) && job.state === "JOB_STATE_RUNNING" ? [{ index, node: job.node_id }] : []
      )
      expect(firstCancelled).toBeGreaterThanOrEqual(0)
      expect(secondClaims.length).toBeGreaterThan(0)
      expect(secondClaims.every((claim) => claim.index > firstCancelled && claim.node === firstRunning.node_id)).toBe(
        true
      )
      expect(events.at(-1)).toMatchObject({ id: second.id, state: "JOB_STATE_FINISHED" })
      const handBacks = (id: unknown) =>
        small.logs.filter((line) => line.message.includes(`job ${String(id)} does not fit`)).length
      expect([handBacks(second.id), handBacks(third.id)]).toEqual([1, 1])
    }, 300_000)

    it("a segment is handed back with its own need, once, and scored on the node once it has the room: the job unsplit, bit for bit", async () => {
      const small = roomForOne
      if (small === undefined) throw new Error("the previous test found no node with room for one score")
      const smallId = String(small.logs.find((line) => line.message === "registered")?.annotations.node_id ?? "")
      // A whole score of the long clip holds small's memory; the segments of another need as much.
      const holder = expectOk(await client.submit({ reference: long, distorted: long }, tokens.aWriter))
      await waitFor(
        async () => (childrenNamed(small.process.pid, "ffmpeg").length >= 2 ? true : undefined),
        120_000,
        "the holding score to start its decoders"
      )
      const options = { frame_cnt: 100 }
      const split = expectOk(
        await client.submit(
          { reference: long, distorted: long, options: { ...options, segment_frames: 50 } },
          tokens.aWriter
        )
      )
      const handBacks = (index: number) =>
        small.logs.filter((line) => line.message.includes(`job ${String(split.id)} segment ${index} does not fit`))
          .length
      // Each segment is pulled into small's free slot, found not to fit beside the holder, and
      // handed back with its need (its log line comes before the hand-back's Heartbeat); then
      // skipped while small lacks the room.
      const segmentStates = async () => {
        const job = expectOk(await client.getJob(String(split.id), tokens.aReader))
        return {
          state: job.state,
          segments: (job.segments as ReadonlyArray<{ state: string }>).map((segment) => segment.state)
        }
      }
      const waiting = await waitFor(
        async () => {
          const seen = await segmentStates()
          return handBacks(0) >= 1 && handBacks(1) >= 1 && seen.segments.every((state) => state === "JOB_STATE_PENDING")
            ? seen
            : undefined
        },
        120_000,
        "both segments to be handed back"
      )
      expect(waiting).toEqual({ state: "JOB_STATE_RUNNING", segments: ["JOB_STATE_PENDING", "JOB_STATE_PENDING"] })
      // The holder gives its memory back: small takes one segment at a time (one claim counts the
      // needs it hands out), each scored once, no second hand-back, no attempt counted for one.
      expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id: holder.id }, tokens.aWriter))
      const finished = async (id: unknown) =>
        (await jobInState(client, String(id), tokens.aReader, "JOB_STATE_FINISHED", 240_000)) as unknown as JobView
      const done = await finished(split.id)
      expect([handBacks(0), handBacks(1)]).toEqual([1, 1])
      expect(done.segments.map((segment) => [segment.state, segment.node_id, segment.attempts])).toEqual([
        ["JOB_STATE_FINISHED", smallId, 1],
        ["JOB_STATE_FINISHED", smallId, 1]
      ])
      const whole = await finished(
        expectOk(await client.submit({ reference: long, distorted: long, options }, tokens.aWriter)).id
      )
      expect(whole.segments).toEqual([])
      expect(done.result.frame_count).toBe(100)
      expect(bits(done)).toEqual(bits(whole))
    }, 300_000)
  })
})
