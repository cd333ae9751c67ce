/**
 * The Scorer service: validated requests in, ScoreResponse-shaped results out, as a file job
 * (file-job.ts), a stream (stream.ts) or a ladder (ladder-job.ts). Scoring runs on the native
 * library's own threads; this side only starts, polls and collects, so the event loop keeps
 * answering probes while a long clip scores. Inputs are opened and probed by modules/inputs.
 */
import { Effect } from "effect"
import { integerIn } from "../config/env.ts"
import { makeFileScoring } from "./file-job.ts"
import { makeLadderScoring } from "./ladder-job.ts"
import { NativeScorerLibrary } from "./library.ts"
import { checkFrameSize } from "./model-set.ts"
import { ModelStore } from "./models.ts"
import type { RawGeometry, ScoreJob } from "./request.ts"
import { makePipe, makeStreamScoring } from "./stream.ts"

/** Clips with more frames are refused before anything per frame is allocated (SVC_MAX_FRAMES). */
export const maxFrames = integerIn("SVC_MAX_FRAMES", 1_000_000, 1, 2_000_000_000)

export class Scorer extends Effect.Service<Scorer>()("svc/Scorer", {
  effect: Effect.gen(function* () {
    const library = yield* NativeScorerLibrary
    const models = yield* ModelStore
    const frameLimit = yield* maxFrames
    const { symbols } = library

    const { score, countFrames } = makeFileScoring(symbols, models, library.info, frameLimit)
    const { scoreStream, scoreFed } = makeStreamScoring(symbols, models, library.info, frameLimit)
    const scoreLadder = makeLadderScoring(symbols, models, library.info, frameLimit)
    /** A pipe for a fed stream's decoder: the library reads `read`; `write` goes to the child. */
    const pipe = makePipe(symbols)

    /** Refuses a frame of `geometry` below what a feature of the job accepts (frame-minimum.ts). */
    const checkFrame = (job: ScoreJob, geometry: RawGeometry) => checkFrameSize(models, job, geometry)

    return {
      score,
      countFrames,
      scoreStream,
      scoreFed,
      scoreLadder,
      pipe,
      checkFrame,
      library: library.info,
      models
    } as const
  }),
  dependencies: [ModelStore.Default, NativeScorerLibrary.Default]
}) {}
