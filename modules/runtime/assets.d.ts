// Files imported as text by Bun's `with { type: "text" }` (protos, HTML).
declare module "*.proto" {
  const text: string
  export default text
}
declare module "*.html" {
  const text: string
  export default text
}
