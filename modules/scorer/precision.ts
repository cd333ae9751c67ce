/**
 * Number format of scores. Lossless by default: every number is the double the scorer
 * computed, which JSON prints in shortest round-trip form. "legacy" is the reference
 * command-line tool's 6 decimals; "1".."17" round to that many decimals.
 */
export type Precision =
  | { readonly kind: "lossless" }
  | { readonly kind: "decimals"; readonly decimals: number; readonly label: string }

export const precisionPattern = /^(?:|lossless|legacy|[1-9]|1[0-7])$/

export const precisionRule = 'must be "lossless", "legacy" or a number of decimals from 1 to 17'

/** Parses an already validated precision text ("" is the default, lossless). */
export const parsePrecision = (text: string): Precision => {
  if (text === "" || text === "lossless") return { kind: "lossless" }
  if (text === "legacy") return { kind: "decimals", decimals: 6, label: "legacy" }
  return { kind: "decimals", decimals: Number(text), label: text }
}

export const precisionLabel = (precision: Precision): string =>
  precision.kind === "lossless" ? "lossless" : precision.label

export const applyPrecision =
  (precision: Precision) =>
  (value: number): number =>
    precision.kind === "lossless" || !Number.isFinite(value) ? value : Number(value.toFixed(precision.decimals))
