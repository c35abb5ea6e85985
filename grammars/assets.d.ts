// Grammar assets imported `with { type: "file" }` resolve to a path string.
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.scm" {
  const path: string;
  export default path;
}
declare module "*.cjs" {
  const path: string;
  export default path;
}
