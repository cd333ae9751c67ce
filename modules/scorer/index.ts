/**
 * Public face of the scorer module: the request and ladder contracts, the Scorer service (file
 * jobs, streams, ladders on the native library), result types, poolings, models and the typed
 * errors. Other modules import only this file; inputs are opened and probed by modules/inputs.
 */
export {
  type AlignmentReport,
  alignmentLine,
  ladderFrames,
  ladderPositions
} from "./alignment-report.ts"
export * from "./errors.ts"
export { extraFeatureList, implementationOf } from "./extra-features.ts"
export type { FilePair } from "./file-job.ts"
export * from "./golden.ts"
export type { ScoreHooks } from "./hooks.ts"
export * from "./ladder.ts"
export { bitrateOf, scoreSummary, upperHull, withHull, worstFrames } from "./ladder-summary.ts"
export { mergeLadderSegments } from "./ladder-merge.ts"
export type { LadderFrame, LadderRange, LadderScores } from "./ladder-job.ts"
export { NativeScorerLibrary } from "./library.ts"
export { type AdmitMemory, memoryBudget, type MemoryLedger, memoryLedger } from "./memory-budget.ts"
export { mergeSegmentResults, segmentThumbnailFrames } from "./merge.ts"
export { builtinModelFiles } from "./models/index.ts"
export { type LoadedModel, type ModelInfo, ModelStore } from "./models.ts"
export { materialise, NativeCpu, type NativeSymbols, openNativeLibrary } from "./native.ts"
export { firstScoredFrame, segmentLead, segmentReadFrames, segmentReadStart } from "./native-job.ts"
export { nearestRank, type PercentileName, percentileNames } from "./pooling.ts"
export * from "./precision.ts"
export * from "./request.ts"
export * from "./result.ts"
export { requestOpenApiSchemas, withRequestSchemas } from "./request-openapi.ts"
export { maxFrames, Scorer } from "./service.ts"
export { type Shot, worstShotFrames } from "./shots.ts"
export type { FedSide, Feed, FeedVerdict, FramePair, StreamEvent } from "./stream.ts"
