/**
 * The folder a workspace may keep beside a checkout (fixtures, models, reference tools). The
 * repository must never depend on it (issue 26): the structure test and the README test use
 * this one detector to prove no file or command names it.
 */

/** The sibling folder's name, written once. */
export const WORKSPACE_FOLDER = "shared"

const folder = WORKSPACE_FOLDER
/** Spellings of a path into it: `../NAME`, `join(root, "..", "NAME")`, `/NAME/fixtures`. */
const siblingPaths = [
  new RegExp(String.raw`\.\./${folder}\b`),
  new RegExp(String.raw`["'\`]\.\.["'\`]\s*,\s*["'\`]${folder}["'\`]`),
  new RegExp(String.raw`/${folder}/(?:fixtures|models|reference|seeds)\b`)
]

/** The lines of `text` that name the sibling folder, as "LINE: text". */
export const workspaceReads = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .flatMap((line, index) =>
      siblingPaths.some((pattern) => pattern.test(line)) ? [`${index + 1}: ${line.trim()}`] : []
    )
