// The native C test programs that svc-tester-report embeds (`with { type: "file" }`: a path,
// inside a compiled executable the embedded copy's path). Built by scripts/build-native.sh.
declare module "*/scorer_test" {
  const path: string
  export default path
}
declare module "*/reader_test" {
  const path: string
  export default path
}
declare module "*/feed_test" {
  const path: string
  export default path
}
declare module "*/simd_test" {
  const path: string
  export default path
}
// Scalar reference values that scripts/build.ts records (gitignored). Declared here so the
// project type-checks before a build; run.ts decodes the content with RecordedReference.
declare module "*/scalar-reference.json" {
  const reference: unknown
  export default reference
}
