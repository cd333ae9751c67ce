/**
 * The exact merge of a ladder job scored in segments (issue 30): each rendition's segments are
 * merged by `mergeSegmentResults` (frames concatenated in frame order, every pooled value, shots
 * and thumbnails from them, as for a pair), then its summary's per-frame part and the ladder's
 * hull by the functions one pass over the ladder uses (ladder-summary.ts). The summary's stream
 * facts (size, codec, bitrate, duration) are the rendition's file's, the same in every segment.
 */
import type { LadderRenditionResult, LadderResult } from "./ladder.ts"
import { scoreSummary, withHull } from "./ladder-summary.ts"
import { mergeSegmentResults } from "./merge.ts"
import { type Precision, precisionLabel } from "./precision.ts"
import type { ShotOptions } from "./shots.ts"

/**
 * One ladder result from its segments' results (in segment order, lossless, per frame); the
 * job's precision and per_frame apply afterwards, as to one pass. Undefined when a rendition's
 * segments hold no frames. Throws, as `mergeSegmentResults` does, when a merge cannot be exact.
 */
export const mergeLadderSegments = (
  segments: ReadonlyArray<LadderResult>,
  output: { readonly precision: Precision; readonly perFrame: boolean; readonly shots?: ShotOptions | undefined }
): LadderResult | undefined => {
  const [first] = segments
  if (first === undefined) return undefined
  const renditions: Array<LadderRenditionResult> = []
  for (const [index, rendition] of first.renditions.entries()) {
    const pieces = segments.map((segment) => segment.renditions[index])
    if (pieces.some((piece) => piece?.label !== rendition.label))
      throw new Error(`the segments' rendition ${index} is not "${rendition.label}" in every segment`)
    // Per-frame values are kept for the summary (one pass reads them back for it too).
    const merged = mergeSegmentResults(pieces as ReadonlyArray<LadderRenditionResult>, { ...output, perFrame: true })
    if (merged === undefined) return undefined
    renditions.push({
      ...merged,
      label: rendition.label,
      summary: { ...rendition.summary, ...scoreSummary(merged) },
      frames: output.perFrame ? merged.frames : []
    })
  }
  return {
    renditions: withHull(renditions),
    provenance: {
      ...first.provenance,
      // Each segment reports its own frames read (its context frames left out): the title's add up.
      reference_frames: segments.reduce((sum, segment) => sum + segment.provenance.reference_frames, 0),
      precision: precisionLabel(output.precision)
    }
  }
}
