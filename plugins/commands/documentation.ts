// coder's own documentation, embedded for /help QUESTION (about.ts helpRequest): a module of its
// own, loaded when a question is asked, so the 80 KB of text is not in every run's memory. The
// texts are embedded as packed files (grammars/packed.ts), not as string modules: a string
// module is stored in the binary as UTF-16 (README.md has non-ASCII characters) and unpacked.
import { readAssetText } from "../../grammars/packed.ts";
import aiderFile from "../../docs/aider.md" with { type: "file" };
import readmeFile from "../../README.md" with { type: "file" };

export const fromAider = readAssetText(aiderFile);
export const readme = readAssetText(readmeFile);
