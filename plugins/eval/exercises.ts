// Exercise tasks in the layout of Aider's polyglot benchmark: exercism folders, each with
// `.docs/instructions.md` and `.meta/config.json` naming its solution and test files. The model
// gets the instructions and the solution stubs; the tests run in the task's temporary copy only.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, relative, sep } from "node:path";
import { languageFor } from "../../grammars/languages.ts";

export interface Exercise {
  id: string;
  dir: string;
  name: string;
  language: string;
  solution: string[];
  tests: string[];
  instructions: string;
}

/** Every exercise under `root` (a folder with `.meta/config.json`), sorted by id; a broken one is an Error naming its file. */
export function findExercises(root: string): Exercise[] {
  const found: Exercise[] = [];
  const walk = (dir: string, depth: number) => {
    if (existsSync(join(dir, ".meta", "config.json"))) {
      found.push(readExercise(root, dir));
      return;
    }
    if (depth >= 6) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules") walk(join(dir, entry.name), depth + 1);
    }
  };
  walk(root, 0);
  return found.sort((a, b) => a.id.localeCompare(b.id));
}

function readExercise(root: string, dir: string): Exercise {
  const configPath = join(dir, ".meta", "config.json");
  let files: { solution?: unknown; test?: unknown };
  try {
    files = (JSON.parse(readFileSync(configPath, "utf8")) as { files?: typeof files }).files ?? {};
  } catch (error) {
    throw new Error(`${configPath}: not JSON (${(error as Error).message})`);
  }
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);
  const solution = strings(files.solution);
  const tests = strings(files.test);
  if (!solution.length || !tests.length) throw new Error(`${configPath}: "files" must name "solution" and "test" files`);
  // The polyglot layout is LANGUAGE/exercises/practice/NAME: the folder before "exercises" names the language.
  const parts = relative(root, dir).split(sep);
  const at = parts.indexOf("exercises");
  const language = at > 0 ? parts[at - 1]! : (languageFor(solution[0]!)?.name ?? (extname(solution[0]!).slice(1) || "text"));
  const docs = ["introduction.md", "instructions.md", "instructions.append.md"]
    .map((name) => join(dir, ".docs", name))
    .filter((path) => existsSync(path) && statSync(path).isFile())
    .map((path) => readFileSync(path, "utf8").trim());
  if (!docs.length) throw new Error(`${join(dir, ".docs", "instructions.md")}: missing (every exercise needs its instructions)`);
  const name = basename(dir);
  return { id: `exercise:${language}/${name}`, dir, name, language, solution, tests, instructions: docs.join("\n\n") };
}

/** The request of the first try. */
export function firstRequest(exercise: Exercise): string {
  const files = exercise.solution.join(", ");
  return `${exercise.instructions}\n\n####\n\nUse the above instructions to modify the supplied files: ${files}\nKeep the names of the existing functions, classes and exports: the tests call them. Use only the language's standard library; install no packages.`;
}

/** The request of the second try: the test output, once. */
export function secondRequest(exercise: Exercise, output: string): string {
  return `${output}\n####\n\nThe tests above failed. The tests are correct: do not change them. Fix the code in ${exercise.solution.join(", ")} so that they pass.`;
}

/** The test command of an exercise, by the extension of its solution, as Aider's benchmark runs each language; null when coder knows none. */
export function testCommand(exercise: Exercise, dir: string): string[] | null {
  const ext = extname(exercise.solution[0]!).toLowerCase();
  switch (ext) {
    case ".py":
      // -B: no bytecode cache. A second try of the same size written in the same second as the
      // first would otherwise be judged by the first try's cached bytecode.
      return ["python3", "-B", "-m", "unittest", ...exercise.tests.map((t) => t.replace(/\.py$/, "").split("/").join("."))];
    case ".js":
    case ".mjs":
    case ".cjs":
      return ["node", "--test", ...exercise.tests];
    case ".go":
      return ["go", "test", "./..."];
    case ".rs":
      return ["cargo", "test", "--", "--include-ignored"];
    case ".java":
      return existsSync(join(dir, "gradlew")) ? ["sh", "./gradlew", "test", "--offline"] : ["gradle", "test", "--offline"];
    case ".cpp":
    case ".cc":
    case ".h":
    case ".hpp":
      return ["sh", "-c", "cmake -S . -B build -DEXERCISM_RUN_ALL_TESTS=1 >/dev/null && cmake --build build"];
    default:
      return null;
  }
}

/** The end of a long test output: where the failures are summed up. */
export function tail(text: string, max = 8000): string {
  return text.length <= max ? text : `[... ${text.length - max} characters left out ...]\n${text.slice(-max)}`;
}
