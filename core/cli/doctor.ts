// `coder doctor`: version, config files and their trust, plugins, and a check
// that every embedded grammar loads and runs its tags query. Exits non-zero if
// anything is broken. A config file that cannot be used (unreadable, invalid,
// a version pin this binary does not satisfy) is one failed check, not the end
// of the run (exit 2, as for any config error; other problems exit 1). With
// --json the same report is one JSON document on one line (DoctorReport).
import type { App, Loaded } from "../kernel.ts";
import { type LayerKind, displayPath, isProjectLayer } from "../config/config.ts";
import { displayOrigin, firstLine } from "../plugins/loader.ts";
import { gitProblem, trackedStateFiles } from "../git/git.ts";
import { readJournal } from "../edit/journal.ts";
import { guard, messageOf } from "../plugins/registry.ts";
import { stateDirProblem, trackedStateProblem } from "../edit/state.ts";

export interface GrammarCheck {
  language: string;
  ok: boolean;
  detail: string;
}

/** How a config file's code-running keys stand: a user's own file is trusted; a project's needs trust only for such keys. */
export type DoctorTrust = "yours" | "not-needed" | "trusted" | "untrusted";

/** `coder doctor --json`: field names are stable; new fields may be added. */
export interface DoctorReport {
  version: string;
  bun: string;
  platform: string;
  arch: string;
  executable: string;
  /** The git repository's root, or null outside one. */
  repository: string | null;
  /** The folder coder works in: the repository root, else the current directory. */
  root: string;
  /** Lowest precedence first. A file that could not be used has ok false, trust null and the error as detail. */
  configFiles: { kind: LayerKind; file: string; ok: boolean; trust: DoctorTrust | null; detail: string }[];
  /** The project's keys that need trust, and whether they take effect. */
  trust: { keys: string[]; trusted: boolean };
  /** Every plugin that loaded (ok true) and every one that failed (ok false, detail is the error). */
  plugins: { name: string | null; origin: string | null; ok: boolean; detail: string; sha256: string | null }[];
  /** Tool providers' own checks (each configured MCP server starts and lists its tools), by provider. */
  tools: { provider: string; name: string; ok: boolean; detail: string }[];
  /** Registered items by kind; null when the plugins could not be assembled. */
  counts: { formats: number; context: number; models: number; commands: number } | null;
  /** The repository as coder uses it: git serves it, `.coder/` is a real folder, no write batch left unfinished. */
  repositoryChecks: { name: "git" | "state" | "pending"; ok: boolean; detail: string }[];
  /** One per embedded grammar; a checker that could not run is one entry with language null. */
  grammars: { language: string | null; ok: boolean; detail: string }[];
  /** How many checks failed. */
  problems: number;
  ok: boolean;
}

/** grammars/check.ts (the repo-map's language table), loaded only here. */
async function checkGrammars(): Promise<GrammarCheck[]> {
  return (await import("../../grammars/check.ts")).checkGrammars();
}

const LOOKUP_ORDER: readonly LayerKind[] = ["global", "project", "local", "explicit"];

/** Run every check and collect the report. */
export async function doctorReport(loaded: Loaded, assemble: () => Promise<App>): Promise<DoctorReport> {
  const configFiles: DoctorReport["configFiles"] = [];
  for (const layer of loaded.layers) {
    const trust: DoctorTrust = !isProjectLayer(layer.kind) ? "yours" : !loaded.trustKeys.length ? "not-needed" : loaded.trusted ? "trusted" : "untrusted";
    const detail =
      trust === "yours"
        ? "yours: trusted"
        : trust === "not-needed"
          ? "needs no trust"
          : trust === "trusted"
            ? `trusted (${loaded.trustKeys.join(", ")})`
            : `NOT trusted: ${loaded.trustKeys.join(", ")} ignored (use --trust)`;
    configFiles.push({ kind: layer.kind, file: layer.file, ok: true, trust, detail });
  }
  for (const bad of loaded.configErrors ?? []) configFiles.push({ kind: bad.kind, file: bad.file, ok: false, trust: null, detail: bad.message });
  // Lookup order (lowest precedence first), broken files in their place.
  configFiles.sort((a, b) => LOOKUP_ORDER.indexOf(a.kind) - LOOKUP_ORDER.indexOf(b.kind));

  const plugins: DoctorReport["plugins"] = [];
  let counts: DoctorReport["counts"] = null;
  const tools: DoctorReport["tools"] = [];
  try {
    const app = await assemble();
    for (const p of app.registry.plugins.values()) plugins.push({ name: p.name, origin: p.origin, ok: true, detail: "loaded", sha256: p.sha256 ?? null });
    for (const f of app.registry.failures) plugins.push({ name: f.plugin ?? null, origin: f.origin, ok: false, detail: firstLine(f.message), sha256: null });
    const r = app.registry;
    counts = { formats: r.formats.size, context: r.context.size, models: r.models.size, commands: r.commands.size };
    for (const entry of r.tools.values()) {
      const check = entry.item.check;
      if (!check) continue;
      try {
        for (const row of await guard(entry, "check", () => check.call(entry.item, app.settings.options))) tools.push({ provider: entry.item.name, ...row });
      } catch (error) {
        tools.push({ provider: entry.item.name, name: entry.item.name, ok: false, detail: firstLine(messageOf(error)) });
      }
    }
  } catch (error) {
    plugins.push({ name: null, origin: null, ok: false, detail: firstLine(messageOf(error)), sha256: null });
  }

  let grammars: DoctorReport["grammars"];
  try {
    grammars = await checkGrammars();
  } catch (error) {
    grammars = [{ language: null, ok: false, detail: `grammar check could not run: ${firstLine(messageOf(error))}` }];
  }

  const repositoryChecks = await checkRepository(loaded);
  const problems = [...configFiles, ...plugins, ...tools, ...repositoryChecks, ...grammars].filter((c) => !c.ok).length;
  return {
    version: loaded.version,
    bun: Bun.version,
    platform: process.platform,
    arch: process.arch,
    executable: process.execPath,
    repository: loaded.gitRoot,
    root: loaded.root,
    configFiles,
    trust: { keys: [...loaded.trustKeys], trusted: loaded.trusted },
    plugins,
    tools,
    counts,
    repositoryChecks,
    grammars,
    problems,
    ok: problems === 0,
  };
}

async function checkRepository(loaded: Loaded): Promise<DoctorReport["repositoryChecks"]> {
  const checks: DoctorReport["repositoryChecks"] = [];
  if (loaded.gitRoot !== null) {
    const problem = await gitProblem(loaded.root);
    checks.push({ name: "git", ok: problem === null, detail: problem ?? "git serves this repository" });
  }
  const state = stateDirProblem(loaded.root) ?? (loaded.gitRoot !== null ? trackedStateProblem(await trackedStateFiles(loaded.root)) : null);
  checks.push({ name: "state", ok: state === null, detail: state ?? ".coder/ is usable" });
  const pending = readJournal(loaded.root, (why) => checks.push({ name: "pending", ok: false, detail: `${why} (delete it)` }));
  if (pending) {
    checks.push({ name: "pending", ok: false, detail: `a reply's write batch from ${pending.started} (${pending.files.map((f) => f.path).join(", ")}) was never committed: start coder to commit or restore it` });
  }
  return checks;
}

/** The report as the text `coder doctor` prints. */
export function renderDoctor(report: DoctorReport): string {
  const out: string[] = [];
  const mark = (ok: boolean) => (ok ? "ok  " : "FAIL");
  out.push(`coder ${report.version} (bun ${report.bun}, ${report.platform} ${report.arch})`);
  out.push(`executable: ${report.executable}`);
  out.push(`repository: ${report.repository ?? `(no git repository; using ${report.root})`}`);
  out.push("", "Config files:");
  if (!report.configFiles.length) out.push("  (none)");
  for (const c of report.configFiles) {
    out.push(c.ok ? `  ok    ${c.kind.padEnd(8)} ${displayPath(c.file, process.cwd())}  ${c.detail}` : `  FAIL  ${c.kind.padEnd(8)} ${firstLine(c.detail)}`);
  }
  out.push("", "Plugins:");
  for (const p of report.plugins) {
    if (p.ok) out.push(`  ok    ${p.name}  ${displayOrigin(p.origin ?? "?", process.cwd())}`);
    else if (p.origin === null) out.push(`  FAIL  ${p.detail}`);
    else out.push(`  FAIL  ${p.name ?? "?"}  ${p.origin}: ${p.detail}`);
  }
  if (report.counts) {
    const k = report.counts;
    out.push(`  ${k.formats} edit formats, ${k.context} context providers, ${k.models} model adapters, ${k.commands} commands`);
  }
  if (report.tools.length) {
    out.push("", "Tools:");
    for (const t of report.tools) out.push(`  ${mark(t.ok)}  ${t.provider} ${t.name}  ${firstLine(t.detail)}`);
  }
  out.push("", "Repository:");
  for (const c of report.repositoryChecks) out.push(`  ${mark(c.ok)}  ${c.name.padEnd(8)} ${c.detail}`);
  out.push("", "Grammars:");
  if (!report.grammars.length) out.push("  (none embedded)");
  for (const g of report.grammars) out.push(g.language === null ? `  FAIL  ${g.detail}` : `  ${mark(g.ok)}  ${g.language.padEnd(12)} ${g.detail}`);
  out.push("", report.problems ? `${report.problems} problem${report.problems === 1 ? "" : "s"} found` : "everything works");
  return out.join("\n");
}

export async function runDoctor(loaded: Loaded, assemble: () => Promise<App>): Promise<number> {
  const report = await doctorReport(loaded, assemble);
  const json = loaded.settings.options.json === true;
  process.stdout.write(`${json ? JSON.stringify(report) : renderDoctor(report)}\n`);
  // A config file that cannot be used keeps the exit code of a config error (2); any other problem is 1.
  if (report.configFiles.some((c) => !c.ok)) return 2;
  return report.ok ? 0 : 1;
}
