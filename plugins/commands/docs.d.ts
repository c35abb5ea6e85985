// Markdown files imported `with { type: "file" }` (embedded packed in the binary) are a path for grammars/packed.ts's readAssetText.
declare module "*.md" {
  const path: string;
  export default path;
}
