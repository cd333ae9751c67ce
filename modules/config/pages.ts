/**
 * Per-frame results travel in pages (svc.v1 ReportResult from a node, Job messages to callers),
 * so a full-length title never needs one message of its whole result. Shared by the controller's
 * jobs and the compute node, which otherwise import nothing of each other.
 */

/** The most frames of per-frame results one message carries. */
export const MAX_FRAMES_PER_MESSAGE = 2000

/**
 * A ladder's page of per-frame results: each rendition carries at most this many frames from
 * one offset, so one message still holds at most MAX_FRAMES_PER_MESSAGE frames in all.
 */
export const framesPerRenditionPage = (renditions: number): number =>
  Math.max(1, Math.floor(MAX_FRAMES_PER_MESSAGE / Math.max(1, renditions)))

/** Most reports one ReportResults call carries (svc.v1 ReportResultsRequest.reports). */
export const MAX_REPORTS_PER_CALL = 64
