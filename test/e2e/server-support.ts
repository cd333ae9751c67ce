/** Helpers of the svc-server end-to-end tests: a typed gRPC client, fixtures, scratch files. */
import * as grpc from "@grpc/grpc-js"
import { closeSync, openSync, readFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { fixturesDir } from "../../local/executables.ts"

const scoring = serviceDefinition("svc.v1.SvcScoring")

const method = (name: string) => {
  const definition = scoring[name]
  if (!definition) throw new Error(`no method ${name}`)
  return definition
}

export interface GrpcFailure {
  readonly code: grpc.status
  readonly details: string
}

export const isGrpcFailure = (value: unknown): value is GrpcFailure =>
  typeof value === "object" && value !== null && "code" in value && "details" in value

/** A SvcScoring client speaking plain objects (proto field names). */
export const scoringClient = (address: string) => {
  const client = new grpc.Client(address, grpc.credentials.createInsecure())
  const unary = (name: string, request: object): Promise<Record<string, unknown>> => {
    const { path, requestSerialize, responseDeserialize } = method(name)
    return new Promise((resolve, reject) => {
      client.makeUnaryRequest<object, Record<string, unknown>>(
        path,
        requestSerialize,
        responseDeserialize,
        request,
        (error, response) => (error || !response ? reject(error) : resolve(response))
      )
    })
  }
  /** Sends every message, ends the input, collects every response (or rejects with the status). */
  const stream = (messages: ReadonlyArray<object>): Promise<ReadonlyArray<Record<string, unknown>>> => {
    const { path, requestSerialize, responseDeserialize } = method("ScoreStream")
    const call = client.makeBidiStreamRequest<object, Record<string, unknown>>(
      path,
      requestSerialize,
      responseDeserialize
    )
    const received: Array<Record<string, unknown>> = []
    return new Promise((resolve, reject) => {
      call.on("data", (message: Record<string, unknown>) => received.push(message))
      call.on("error", reject)
      call.on("end", () => resolve(received))
      for (const message of messages) call.write(message)
      call.end()
    })
  }
  return {
    score: (request: object) => unary("Score", request),
    ladder: (request: object) => unary("ScoreLadder", request),
    health: () => unary("Health", {}),
    listModels: () => unary("ListModels", {}),
    stream,
    close: () => client.close()
  }
}

/** The 320x240 4:2:0 8-bit fixture pair (30 frames). */
export const v01 = {
  reference: join(fixturesDir, "v01_testsrc2_420_8_x264.ref.yuv"),
  distorted: join(fixturesDir, "v01_testsrc2_420_8_x264.dis.yuv"),
  options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8 },
  frameBytes: (320 * 240 * 3) / 2,
  frames: 30
} as const

/** Frame pairs of v01, as ScoreStream messages. */
export const v01Frames = (): ReadonlyArray<object> => {
  const reference = readFileSync(v01.reference)
  const distorted = readFileSync(v01.distorted)
  return Array.from({ length: v01.frames }, (_, i) => ({
    frame: {
      reference: reference.subarray(i * v01.frameBytes, (i + 1) * v01.frameBytes),
      distorted: distorted.subarray(i * v01.frameBytes, (i + 1) * v01.frameBytes)
    }
  }))
}

/** `source` repeated `times` times into `target`, for a long score. */
export const repeatFile = (source: string, target: string, times: number) => {
  const bytes = readFileSync(source)
  const fd = openSync(target, "w")
  for (let i = 0; i < times; i++) writeSync(fd, bytes)
  closeSync(fd)
}
