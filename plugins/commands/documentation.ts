// coder's own documentation, embedded for /help QUESTION (about.ts helpRequest): a module of its
// own, loaded when a question is asked, so the 80 KB of text is not in every run's memory.
import fromAider from "../../docs/aider.md" with { type: "text" };
import readme from "../../README.md" with { type: "text" };

export { fromAider, readme };
