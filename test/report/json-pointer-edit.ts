// Test helper: edits a parsed JSON document at a JSON Pointer (RFC 6901).
export type Edit = { readonly set: string; readonly value: unknown } | { readonly remove: string }

const unescapeToken = (token: string): string => token.replaceAll("~1", "/").replaceAll("~0", "~")

const isContainer = (value: unknown): value is { [key: string]: unknown } => typeof value === "object" && value !== null

export const applyEdit = (document: unknown, edit: Edit): void => {
  const pointer = "set" in edit ? edit.set : edit.remove
  const tokens = pointer.split("/").slice(1).map(unescapeToken)
  const last = tokens.pop()
  if (last === undefined) throw new Error("cannot edit the whole document")
  let parent: unknown = document
  for (const token of tokens) {
    if (!isContainer(parent)) throw new Error(`${pointer}: no container at ${token}`)
    parent = parent[token]
  }
  if (!isContainer(parent)) throw new Error(`${pointer}: parent is not a container`)
  if ("set" in edit) parent[last] = edit.value
  else if (Array.isArray(parent)) parent.splice(Number(last), 1)
  else if (last in parent) delete parent[last]
  else throw new Error(`${pointer}: nothing to remove`)
}
