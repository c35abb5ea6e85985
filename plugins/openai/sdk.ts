// What coder uses of the openai package, in one module of its own: the adapter and speech to
// text import this, not "openai", because a dynamic import of the package keeps its whole
// namespace in the bundle (its Azure and Bedrock clients, the computer-use and Responses helpers),
// while re-exported names keep only what they reach.
export { default as OpenAI, toFile } from "openai";
