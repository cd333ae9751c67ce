// Files the executables embed through Bun's import attributes (`bun build --compile` bundles them).
// `with { type: "text" }`: the file's text (protos, HTML pages).
declare module "*.proto" {
  const text: string
  export default text
}
declare module "*.html" {
  const text: string
  export default text
}
// `with { type: "file" }`: a path to the file (inside a compiled executable, an embedded path).
declare module "*.so" {
  const path: string
  export default path
}
// The decoders' launcher (modules/inputs/native/svc_exec.c), a path like the library's.
declare module "*/svc-exec" {
  const path: string
  export default path
}
