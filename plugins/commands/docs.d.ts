// Markdown files imported `with { type: "text" }` (embedded in the binary) are their text.
declare module "*.md" {
  const text: string;
  export default text;
}
