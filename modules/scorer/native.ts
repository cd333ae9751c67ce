/**
 * bun:ffi binding of the native scorer (modules/scorer/native/include/svc_scorer.h).
 * The library is embedded in compiled executables; there it is first copied out of Bun's
 * embedded file system into TMPDIR, so its real path is known (readiness checks it).
 */
import { dlopen, FFIType, type Pointer } from "bun:ffi"
import { createHash } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import embeddedLibrary from "./native/build/libsvc_scorer.so" with { type: "file" }
import { type NativeFeatureFacts, nativeFeatures, type RequestableFeature } from "./native-features.ts"

const { ptr, i32, u64, i64, cstring } = FFIType
const none = FFIType.void

const symbols = {
  svc_version: { args: [], returns: cstring },
  svc_abi_minor: { args: [], returns: i32 },
  svc_abi_patch: { args: [], returns: i32 },
  svc_cpu_best: { args: [], returns: cstring },
  svc_cpu_supported: { args: [i32], returns: i32 },
  svc_model_load: { args: [ptr, u64, ptr, ptr, u64], returns: i32 },
  svc_model_free: { args: [ptr], returns: none },
  svc_model_feature_count: { args: [ptr], returns: i32 },
  svc_model_feature_name: { args: [ptr, i32], returns: cstring },
  svc_model_check: { args: [ptr, ptr, u64], returns: i32 },
  svc_model_bundle: { args: [ptr, ptr, i32, ptr, ptr, u64], returns: i32 },
  svc_job_start: { args: [ptr, ptr, ptr, ptr, i32, ptr, ptr, u64], returns: i32 },
  svc_job_open_fd: { args: [ptr, i32, ptr, i32, ptr, ptr, i32, ptr, ptr, u64], returns: i32 },
  svc_job_opened: { args: [ptr], returns: i32 },
  svc_job_input_frames: { args: [ptr], returns: i64 },
  svc_job_memory: { args: [ptr], returns: i64 },
  svc_job_run: { args: [ptr, ptr, u64], returns: i32 },
  svc_job_poll: { args: [ptr], returns: i32 },
  svc_job_frames_done: { args: [ptr], returns: i32 },
  svc_job_cancel: { args: [ptr], returns: none },
  svc_job_error: { args: [ptr, ptr, u64], returns: i32 },
  svc_job_geometry: { args: [ptr, ptr], returns: i32 },
  svc_job_frame_count: { args: [ptr], returns: i32 },
  svc_job_metric_count: { args: [ptr], returns: i32 },
  svc_job_metric_name: { args: [ptr, i32], returns: cstring },
  svc_job_extractor_count: { args: [ptr], returns: i32 },
  svc_job_extractor_name: { args: [ptr, i32], returns: cstring },
  svc_job_extractor_backend: { args: [ptr, i32], returns: cstring },
  svc_job_frame_values: { args: [ptr, i32, ptr, i32], returns: i32 },
  svc_job_frame_values_from: { args: [ptr, i32, i32, ptr, i32], returns: i32 },
  svc_job_pooled: { args: [ptr, i32, i32, ptr], returns: i32 },
  svc_job_frame_cuts: { args: [ptr, i32, ptr, i32], returns: i32 },
  svc_job_free: { args: [ptr], returns: none },
  svc_stream_create: { args: [ptr, ptr, i32, ptr, ptr, u64], returns: i32 },
  svc_stream_frame_bytes: { args: [ptr], returns: i64 },
  svc_stream_push: { args: [ptr, ptr, u64, ptr, u64, ptr, u64], returns: i32 },
  svc_stream_finish: { args: [ptr], returns: i32 },
  svc_stream_frames_ready: { args: [ptr], returns: i32 },
  svc_stream_poll: { args: [ptr], returns: i32 },
  svc_stream_job: { args: [ptr], returns: ptr },
  svc_stream_free: { args: [ptr], returns: none },
  svc_ladder_create: { args: [ptr, i32, ptr, i32, ptr, ptr, u64], returns: i32 },
  svc_ladder_rendition: { args: [ptr, i32], returns: ptr },
  svc_ladder_reference_loads: { args: [ptr], returns: i64 },
  svc_ladder_motion_diffs: { args: [ptr], returns: i64 },
  /** Since ABI minor 16 (svc_stream_feed with index pipes; -1: none). */
  svc_stream_feed_indexed: { args: [ptr, i32, ptr, ptr, ptr, ptr, ptr, ptr, u64], returns: i32 },
  svc_stream_feed_end: { args: [ptr, i32], returns: i64 },
  svc_stream_frames_read: { args: [ptr], returns: i64 },
  svc_pipe: { args: [ptr, ptr, u64], returns: i32 },
  svc_ladder_reference_analyses: { args: [ptr], returns: i64 },
  /** Since ABI minor 15. */
  svc_ladder_range: { args: [ptr, i32, i64, i64, ptr, u64], returns: i32 },
  svc_feature_count: { args: [], returns: i32 },
  svc_feature_name: { args: [i32], returns: cstring },
  svc_feature_flag: { args: [i32], returns: i32 },
  svc_feature_implementation: { args: [i32], returns: cstring },
  svc_feature_output_count: { args: [i32], returns: i32 },
  svc_feature_output_name: { args: [i32, i32], returns: cstring },
  svc_feature_temporal: { args: [i32], returns: i32 },
  svc_feature_min_frame: { args: [i32, ptr], returns: i32 },
  svc_feature_option_count: { args: [i32], returns: i32 },
  svc_feature_option_name: { args: [i32, i32], returns: cstring }
} as const

/** Status codes of svc_scorer.h. */
export const NativeStatus = {
  ok: 0,
  invalidArgument: -1,
  io: -2,
  geometry: -3,
  model: -4,
  noMemory: -5,
  internal: -6,
  cancelled: -7
} as const

/** Indexes of the int32 options array (enum svc_opt). */
export const NativeOption = {
  inputKind: 0,
  width: 1,
  height: 2,
  pixelFormat: 3,
  bitdepth: 4,
  threads: 5,
  cpu: 6,
  features: 7,
  subsample: 8,
  frameCount: 9,
  frameSkipRef: 10,
  frameSkipDist: 11,
  referenceKind: 12,
  distortedKind: 13,
  maxFrames: 14,
  shots: 15,
  /** Since ABI minor 11. */
  frameRate: 16,
  colorMatrix: 17,

  /** Since ABI minor 12. */
  segmentFirst: 18,
  segmentFrames: 19,
  segmentContext: 20,
  /** Since ABI minor 13. */
  segmentLead: 21,
  count: 22
} as const

/** enum svc_color_matrix (since ABI minor 11). */
export const NativeColorMatrix = { bt709: 0, bt601: 1, bt2020: 2 } as const

/** enum svc_segment_context (ABI minor 12). */
export const NativeSegmentContext = { before: 1, after: 2 } as const

/** enum svc_input_kind; pipe (svc_stream_feed only) since ABI minor 8. */
export const NativeInputKind = { auto: 0, raw: 1, y4m: 2, pipe: 3 } as const

/** enum svc_cpu; avx512 since ABI minor 3. */
export const NativeCpu = { auto: 0, scalar: 1, avx2: 2, avx512: 3 } as const
/** enum svc_feature_flag of each feature a request may ask for, from the library's registry (native-features.ts). */
export const NativeFeature = Object.fromEntries(
  nativeFeatures.flatMap((feature) => (feature.flag === 0 ? [] : [[feature.name, feature.flag]]))
) as Readonly<Record<RequestableFeature, number>>
export const NativePool = { mean: 0, min: 1, max: 2, harmonic_mean: 3 } as const

/**
 * Where an embedded native file is used from: the build output, or a copy of the embedded one
 * in TMPDIR (named by its digest, so every build and process finds its own).
 */
export const materialise = (path: string): string => {
  if (existsSync(path) && !path.includes("$bunfs")) return path
  const bytes = readFileSync(path)
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16)
  const dir = join(process.env.TMPDIR ?? tmpdir(), "svc-native")
  mkdirSync(dir, { recursive: true })
  const name = basename(path)
  const dot = name.indexOf(".")
  const target = join(dir, dot < 0 ? `${name}-${digest}` : `${name.slice(0, dot)}-${digest}${name.slice(dot)}`)
  if (!existsSync(target)) {
    const partial = `${target}.${process.pid}.tmp`
    writeFileSync(partial, bytes)
    chmodSync(partial, 0o755)
    // rename is atomic: concurrent processes never dlopen a half-written file.
    renameSync(partial, target)
  }
  return target
}

export const openNativeLibrary = () => {
  const path = materialise(embeddedLibrary)
  const library = dlopen(path, symbols)
  return { path, symbols: library.symbols, close: () => library.close() }
}

export type NativeLibrary = ReturnType<typeof openNativeLibrary>
export type NativeSymbols = NativeLibrary["symbols"]
export type { Pointer }

const minimumRules = [undefined, "each side", "longer side", "each plane"] as const

/** The library's extractors and their facts (svc_feature_*, ABI minor 14), in registry order. */
export const readNativeFeatures = (symbols: NativeSymbols): ReadonlyArray<NativeFeatureFacts> =>
  Array.from({ length: symbols.svc_feature_count() }, (_, i) => {
    const minimum = new Int32Array(3)
    symbols.svc_feature_min_frame(i, minimum)
    const [rule, width = 0, height = 0] = minimum
    const ruleName = minimumRules[rule ?? 0]
    return {
      name: String(symbols.svc_feature_name(i)),
      flag: symbols.svc_feature_flag(i),
      implementation: String(symbols.svc_feature_implementation(i)),
      outputs: Array.from({ length: symbols.svc_feature_output_count(i) }, (_, k) =>
        String(symbols.svc_feature_output_name(i, k))
      ),
      temporal: symbols.svc_feature_temporal(i),
      minimum:
        ruleName === undefined
          ? null
          : ruleName === "longer side"
            ? { rule: ruleName, side: width }
            : { rule: ruleName, width, height },
      options: Array.from({ length: symbols.svc_feature_option_count(i) }, (_, k) =>
        String(symbols.svc_feature_option_name(i, k))
      )
    }
  })

/** A NUL-terminated UTF-8 copy of a string, for `const char *` parameters. */
export const cString = (text: string): Buffer => Buffer.from(`${text}\0`, "utf8")

/** A message buffer for (err, err_len) parameters and its decoded text. */
export const errorBuffer = () => {
  const buffer = Buffer.alloc(1024)
  return {
    buffer,
    length: buffer.length,
    text: () => {
      const end = buffer.indexOf(0)
      return buffer.toString("utf8", 0, end < 0 ? buffer.length : end)
    }
  }
}

/** An out-parameter for a handle (`T **out`). */
export const handleSlot = () => {
  const slot = new BigUint64Array(1)
  return { slot, pointer: (): Pointer | null => (slot[0] === 0n ? null : (Number(slot[0]) as Pointer)) }
}
