/**
 * Segment jobs on PostgreSQL (issues 30 and 35), end to end on the compiled executables: two
 * svc-controller replicas on one database (auth disabled), two svc-nodes on each. A 240-frame
 * 640x360 raw pair submitted with segment_frames 40 through one replica finishes as 6 segments
 * scored by nodes of both replicas, with per-frame and pooled values bit-identical to the same
 * job unsplit. The plan is reported through one replica while the nodes of the other long-poll
 * there, so their replica must learn of the new segments (the notification) and know the nodes
 * score segments (the session row). A ladder job (a raw rendition and a 160x90 mp4 one) in
 * segments merges per rendition on PostgreSQL too, bit-identical to the ladder unsplit.
 */
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../local/postgres-server.ts"
import { type RunningService, requireBuilt, startService } from "../../local/executables.ts"
import { ffmpegRunAsync, scratchDir, writeSegmentTitle } from "../support/media.ts"
import { ControllerClient, expectOk, jobInState } from "./controller-support.ts"
import { bits, finishedJob, type JobView, nodeIdOf, token } from "./segments-support.ts"

const width = 640
const height = 360
const frames = 240

const media = scratchDir("svc-segments-pg-e2e-")
const path = (name: string) => join(media.dir, name)

describe.skipIf(!postgresAvailable())("segment jobs on two PostgreSQL replicas", () => {
  let pg: PostgresServer
  const controllers: Array<RunningService> = []
  const nodes: Array<{ readonly service: RunningService; readonly replica: number }> = []
  const clients: Array<ControllerClient> = []

  beforeAll(async () => {
    requireBuilt("svc-node")
    // The title (and the ladder's 160x90 rendition) is written while PostgreSQL and the services
    // start: nothing reads it before a submit.
    const written = writeSegmentTitle(media.dir, { width, height, frames }).then(() =>
      ffmpegRunAsync([
        "-f",
        "rawvideo",
        "-pix_fmt",
        "yuv420p",
        "-s",
        `${width}x${height}`,
        "-r",
        "24",
        "-i",
        path("ref.yuv"),
        "-vf",
        "scale=160:90",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-g",
        "20",
        "-y",
        path("low.mp4")
      ])
    )
    pg = await startPostgres()
    await pg.createDatabase("segments")
    // Both replicas start at once (the migrations run once, under the advisory lock), then the
    // nodes, two on each.
    controllers.push(
      ...(await Promise.all(
        [0, 1].map(() =>
          startService("svc-controller", {
            listeners: ["http", "grpc"],
            env: {
              SVC_AUTH_DISABLED: "true",
              SVC_SCORING_ROOTS: media.dir,
              SVC_STORE_URL: pg.url("segments"),
              SVC_STORE_PASSWORD_FILE: pg.passwordFile,
              SVC_LOG_LEVEL: "info"
            }
          })
        )
      ))
    )
    clients.push(...controllers.map((controller) => new ControllerClient(controller.grpc ?? "")))
    nodes.push(
      ...(await Promise.all(
        [0, 0, 1, 1].map(async (replica, index) => ({
          service: await startService("svc-node", {
            env: {
              SVC_CONTROLLER_ADDR: controllers[replica]?.grpc ?? "",
              SVC_NODE_NAME: `node-${index}-of-replica-${replica}`,
              SVC_NODE_SLOTS: "1"
            }
          }),
          replica
        }))
      ))
    )
    await written
  }, 300_000)

  afterAll(async () => {
    for (const client of clients) client.close()
    await Promise.all(nodes.map(({ service }) => service.stop()))
    await Promise.all(controllers.map((controller) => controller.stop()))
    pg?.stop()
    media.remove()
  })

  const finished = (client: ControllerClient, id: string): Promise<JobView> => finishedJob(client, id)

  it("a pair with segment_frames 40 finishes as 6 segments on nodes of both replicas, bit-identical to the job unsplit", async () => {
    const pair = {
      reference: path("ref.yuv"),
      distorted: path("dis.yuv"),
      options: { width, height, pixel_format: "420", bitdepth: 8, per_frame: true }
    }
    const [one, two] = clients
    if (one === undefined || two === undefined) throw new Error("two controllers")
    const wholeId = String(expectOk(await one.submit(pair, token)).id)
    const whole = await finished(two, wholeId)
    expect(whole.result.frame_count).toBe(frames)
    const splitId = String(
      expectOk(await two.submit({ ...pair, options: { ...pair.options, segment_frames: 40 } }, token)).id
    )
    const split = await finished(one, splitId)
    expect(split.segments.map((segment) => [segment.index, segment.state])).toEqual(
      Array.from({ length: 6 }, (_, index) => [index, "JOB_STATE_FINISHED"])
    )
    const replicaOf = new Map(nodes.map(({ service, replica }) => [nodeIdOf(service), replica]))
    const scoredOn = new Set(split.segments.map((segment) => replicaOf.get(segment.node_id)))
    expect(scoredOn).toEqual(new Set([0, 1]))
    expect(bits(split)).toEqual(bits(whole))
  })

  it("a ladder job with frame_cnt 48 and segment_frames 24 merges every rendition on PostgreSQL, bit-identical to the ladder unsplit", async () => {
    interface Rendition {
      readonly frames: ReadonlyArray<{ readonly frame: number; readonly metrics: Record<string, number> }>
      readonly features: Record<string, number>
      readonly pooled: Record<string, Record<string, number>>
      readonly summary: unknown
    }
    const ladder = (options: object) => ({
      ladder: {
        reference: path("ref.yuv"),
        renditions: [
          { label: "raw", distorted: path("dis.yuv") },
          { label: "low", distorted: path("low.mp4") }
        ],
        options: { width, height, pixel_format: "420", bitdepth: 8, per_frame: true, frame_cnt: 48, ...options }
      }
    })
    const [one, two] = clients
    if (one === undefined || two === undefined) throw new Error("two controllers")
    const run = async (options: object) => {
      const id = String(expectOk(await one.unary("svc.v1.Jobs", "SubmitJob", ladder(options), token)).id)
      const job = (await jobInState(two, id, token, "JOB_STATE_FINISHED", 240_000)) as unknown as JobView & {
        readonly ladder_result: { readonly renditions: ReadonlyArray<Rendition> }
      }
      return { segments: job.segments, renditions: job.ladder_result.renditions }
    }
    const whole = await run({})
    const split = await run({ segment_frames: 24 })
    expect(split.segments.map((segment) => segment.state)).toEqual(["JOB_STATE_FINISHED", "JOB_STATE_FINISHED"])
    expect(whole.renditions[0]?.frames).toHaveLength(48)
    split.renditions.forEach((rendition, index) => {
      const unsplit = whole.renditions[index] as Rendition
      expect(bits({ result: rendition } as unknown as JobView)).toEqual(bits({ result: unsplit } as unknown as JobView))
      expect(rendition.summary).toEqual(unsplit.summary)
    })
  })
})
