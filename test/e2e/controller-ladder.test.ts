/**
 * Ladders through the compiled controller (tenants with a JWKS served by the test) and its node:
 * a ladder job of four ffmpeg-made renditions (other sizes and codecs) gives, per rendition,
 * exactly the per-frame values of four separate scores of the same pairs, its frames paged per
 * rendition; the controller's own POST /v1/ladder and ScoreLadder do too, with the roles of Score
 * and every rendition's path checked against the tenant's roots; `svc jobs submit --rendition`
 * and `svc jobs wait` run one from the command line; cancelling a ladder job stops every decoder
 * on the node.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { framesPerRenditionPage } from "../../modules/jobs/model.ts"
import type { RunningService } from "../../local/executables.ts"
import { expectSameFrames, type LadderMedia, makeLadderMedia, type PerFrame } from "../support/ladder.ts"
import { childrenNamed, writeLongClip } from "../support/media.ts"
import {
  ControllerClient,
  controllerEnv,
  expectOk,
  IdentityProviders,
  jobInState,
  makeTokens,
  Scratch,
  startController,
  startNode,
  type Tokens,
  tenantsDocument,
  waitFor
} from "./controller-support.ts"
import { svc } from "./svc-support.ts"

interface RenditionResult {
  readonly label: string
  readonly frames: ReadonlyArray<PerFrame>
  readonly frame_count: number
  readonly shots: ReadonlyArray<{
    readonly first_frame: number
    readonly frame_count: number
    readonly worst_frame: number
  }>
  readonly worst_shots: ReadonlyArray<number>
  readonly thumbnails: ReadonlyArray<{ readonly frame: number; readonly reference: string; readonly distorted: string }>
}
interface LadderResponse {
  readonly renditions: ReadonlyArray<RenditionResult>
  readonly provenance: { readonly reference_passes: number }
}

const scratch = new Scratch()
const idp = new IdentityProviders()
let tokens: Tokens
let controller: RunningService
let node: RunningService
let client: ControllerClient
let media: LadderMedia
/** Per rendition label: the per-frame values of its pair scored alone (the controller's Score). */
const separate = new Map<string, ReadonlyArray<PerFrame>>()

const ladderRequest = () => ({ reference: media.reference, renditions: media.renditions })

const expectLadderOfSeparateScores = (renditions: ReadonlyArray<RenditionResult>) => {
  expect(renditions.map((rendition) => rendition.label)).toEqual(media.renditions.map((r) => r.label))
  for (const rendition of renditions)
    expectSameFrames(rendition.label, rendition.frames, separate.get(rendition.label) ?? [])
}

beforeAll(async () => {
  tokens = await makeTokens(idp)
  scratch.write("tenants.json", tenantsDocument(idp, scratch))
  media = makeLadderMedia(scratch.rootA)
  controller = await startController(controllerEnv(scratch))
  client = new ControllerClient(controller.grpc ?? "")
  node = await startNode(scratch, controller.grpc ?? "", tokens.aNode, "node-a")
  for (const rendition of media.renditions) {
    const scored = expectOk(
      await client.unary(
        "svc.v1.SvcScoring",
        "Score",
        { reference: media.reference, distorted: rendition.distorted, options: { per_frame: true } },
        tokens.aWriter
      )
    )
    separate.set(rendition.label, scored.frames as ReadonlyArray<PerFrame>)
  }
}, 180_000)

afterAll(async () => {
  client?.close()
  await node?.stop()
  await controller?.stop()
  idp.stop()
  scratch.remove()
})

describe("a ladder job on a node", () => {
  it("gives every rendition exactly the per-frame values of its pair scored alone, paged per rendition, with shots and their pictures", async () => {
    const submitted = expectOk(
      await client.unary(
        "svc.v1.Jobs",
        "SubmitJob",
        { ladder: { ...ladderRequest(), options: { shots: true } } },
        tokens.aWriter
      )
    )
    expect(submitted).toMatchObject({ state: "JOB_STATE_PENDING", tenant_id: "a", request: null })
    expect((submitted.ladder as { renditions: ReadonlyArray<unknown> }).renditions).toHaveLength(4)
    const id = String(submitted.id)
    const finished = await jobInState(client, id, tokens.aReader, "JOB_STATE_FINISHED")
    const result = finished.ladder_result as LadderResponse
    expect(finished.result).toBeNull()
    expect(result.provenance.reference_passes).toBe(1)
    expect(finished.frames_done).toBe(result.renditions[0]?.frame_count)
    // The final report completes every rendition's progress.
    expect(finished.rendition_progress).toEqual(
      result.renditions.map((rendition) => ({ label: rendition.label, frames_done: rendition.frame_count }))
    )
    expectLadderOfSeparateScores(result.renditions)
    // The reference has no cut: every rendition has one shot, its worst, and that shot's picture
    // (rendered by the node, stored and returned by the controller).
    for (const rendition of result.renditions) {
      expect(
        rendition.shots.map((shot) => [shot.first_frame, shot.frame_count]),
        rendition.label
      ).toEqual([[0, 30]])
      expect(rendition.worst_shots, rendition.label).toEqual([0])
      expect(
        rendition.thumbnails.map((picture) => picture.frame),
        rendition.label
      ).toEqual([rendition.shots[0]?.worst_frame])
      expect(rendition.thumbnails[0]?.distorted, rendition.label).toMatch(/^data:image\/png;base64,/)
    }
    // Pages: GetJob's frames_offset moves every rendition's window at once.
    const page = framesPerRenditionPage(4)
    const paged = expectOk(
      await client.unary("svc.v1.Jobs", "GetJob", { id, frames_offset: 10, frames_limit: 5 }, tokens.aReader)
    )
    for (const rendition of (paged.ladder_result as LadderResponse).renditions) {
      expect(rendition.frames.map((frame) => frame.frame)).toEqual([10, 11, 12, 13, 14])
      expect(rendition.frame_count).toBe(30)
    }
    expect(page).toBe(500)
  }, 180_000)

  it("refuses a ladder with a rendition outside the tenant's roots before a job exists", async () => {
    const outside = join(scratch.outside, "secret.yuv")
    const refused = await client.unary(
      "svc.v1.Jobs",
      "SubmitJob",
      {
        ladder: {
          ...ladderRequest(),
          renditions: [...media.renditions, { label: "outside", distorted: outside, options: { width: 8, height: 8 } }]
        }
      },
      tokens.aWriter
    )
    expect(refused.ok || [refused.code, refused.details]).toEqual([
      GrpcStatus.PERMISSION_DENIED,
      `scoring input "${outside}" is outside the tenant's scoring roots`
    ])
    const reader = await client.unary("svc.v1.Jobs", "SubmitJob", { ladder: ladderRequest() }, tokens.aReader)
    expect(reader.ok || reader.code).toBe(GrpcStatus.PERMISSION_DENIED)
  })

  it("svc jobs submit REF --rendition ... and svc jobs wait: the ladder's result on the command line", async () => {
    const env = { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_CONTROLLER_TOKEN: tokens.aWriter }
    const submitted = await svc(
      [
        "jobs",
        "submit",
        media.reference,
        ...media.renditions.flatMap((r) => ["--rendition", `${r.label}=${r.distorted}`])
      ],
      env
    )
    expect(submitted.code, submitted.stderr).toBe(0)
    const id = submitted.stdout.trim()
    const waited = await svc(["jobs", "wait", id, "--format", "json", "-q", "--timeout", "150"], env)
    expect(waited.code, waited.stderr).toBe(0)
    expectLadderOfSeparateScores((JSON.parse(waited.stdout) as LadderResponse).renditions)
    const listed = await svc(["jobs", "list", "--limit", "1"], env)
    expect(listed.stdout).toContain(`${id}  finished`)
    expect(listed.stdout).toContain("ladder of 4")
  }, 180_000)

  it("a running ladder job shows its frames per rendition (GetJob, svc jobs get), for every label", async () => {
    const long = join(scratch.rootA, "progress.mkv")
    await writeLongClip(long)
    const labels = ["low", "mid", "high"]
    const ladder = {
      reference: long,
      renditions: labels.map((label) => ({ label, distorted: long })),
      options: { threads: 1 }
    }
    const submitted = expectOk(await client.unary("svc.v1.Jobs", "SubmitJob", { ladder }, tokens.aWriter))
    const id = String(submitted.id)
    expect(submitted.rendition_progress).toEqual([])
    // Polled until a progress report has counted frames of every rendition while the job runs
    // (1500 frames at one thread take far longer than the node's one-second report interval).
    const running = await waitFor(
      async () => {
        const job = expectOk(await client.getJob(id, tokens.aReader))
        const progress = job.rendition_progress as ReadonlyArray<{ label: string; frames_done: number }>
        return job.state === "JOB_STATE_RUNNING" &&
          progress.length === labels.length &&
          progress.every((entry) => entry.frames_done > 0)
          ? { job, progress }
          : undefined
      },
      120_000,
      "frames of every rendition reported while running"
    )
    expect(running.progress.map((entry) => entry.label)).toEqual(labels)
    for (const entry of running.progress) {
      expect(entry.frames_done).toBeLessThanOrEqual(1500)
      // One pass scores every rendition's frame together: none is ahead of the ladder's count.
      expect(entry.frames_done).toBeLessThanOrEqual(Number(running.job.frames_done))
    }
    const env = { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_CONTROLLER_TOKEN: tokens.aReader }
    const got = await svc(["jobs", "get", id], env)
    expect(got.code, got.stderr).toBe(0)
    const shown = JSON.parse(got.stdout) as {
      rendition_progress: ReadonlyArray<{ label: string; frames_done: number }>
    }
    expect(shown.rendition_progress.map((entry) => entry.label)).toEqual(labels)
    for (const [index, entry] of shown.rendition_progress.entries())
      expect(entry.frames_done).toBeGreaterThanOrEqual(running.progress[index]?.frames_done ?? 0)
    // Done observing: stop it rather than score a minute of video.
    const pid = node.process.pid
    expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id }, tokens.aWriter))
    await waitFor(async () => (childrenNamed(pid, "ffmpeg").length === 0 ? true : undefined), 20_000, "no decoder")
  }, 180_000)

  it("cancelling a ladder job while its node decodes stops every decoder", async () => {
    const long = join(scratch.rootA, "long.mkv")
    await writeLongClip(long)
    const ladder = {
      reference: long,
      renditions: [
        { label: "a", distorted: long },
        { label: "b", distorted: long }
      ],
      options: { threads: 1 }
    }
    const pid = node.process.pid
    const submitted = expectOk(await client.unary("svc.v1.Jobs", "SubmitJob", { ladder }, tokens.aWriter))
    // The reference's decoder and one per rendition.
    await waitFor(async () => (childrenNamed(pid, "ffmpeg").length >= 3 ? true : undefined), 60_000, "3 decoders")
    expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id: submitted.id }, tokens.aWriter))
    await waitFor(async () => (childrenNamed(pid, "ffmpeg").length === 0 ? true : undefined), 20_000, "no decoder")
    expect(expectOk(await client.getJob(String(submitted.id), tokens.aReader)).state).toBe("JOB_STATE_CANCELLED")
  }, 180_000)
})

describe("the controller's own ladder endpoints", () => {
  it("ScoreLadder: the same numbers; writer and admin only", async () => {
    const scored = expectOk(
      await client.unary(
        "svc.v1.SvcScoring",
        "ScoreLadder",
        { ...ladderRequest(), options: { per_frame: true } },
        tokens.aWriter
      )
    ) as unknown as LadderResponse
    expectLadderOfSeparateScores(scored.renditions)
    const reader = await client.unary("svc.v1.SvcScoring", "ScoreLadder", ladderRequest(), tokens.aReader)
    expect(reader.ok || [reader.code, reader.details]).toEqual([
      GrpcStatus.PERMISSION_DENIED,
      "role required: svc:writer, svc:admin"
    ])
  }, 120_000)

  it("POST /v1/ladder: the same numbers; 403 for a reader and for a rendition outside the roots", async () => {
    const post = (body: unknown, token: string) =>
      fetch(`${controller.http}/v1/ladder`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(body)
      })
    const ok = await post({ ...ladderRequest(), options: { per_frame: true } }, tokens.aWriter)
    expect(ok.status).toBe(200)
    expectLadderOfSeparateScores(((await ok.json()) as LadderResponse).renditions)
    expect((await post(ladderRequest(), tokens.aReader)).status).toBe(403)
    const escaping = join(scratch.rootA, "escape.yuv")
    const outside = await post(
      {
        ...ladderRequest(),
        renditions: [...media.renditions, { label: "escape", distorted: escaping, options: { width: 8, height: 8 } }]
      },
      tokens.aWriter
    )
    expect(outside.status).toBe(403)
    expect(((await outside.json()) as { error: string }).error).toContain("is outside the tenant's scoring roots")
  }, 120_000)
})
