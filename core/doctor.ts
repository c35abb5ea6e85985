// `coder doctor`: version, config files and their trust, plugins, and a check
// that every embedded grammar loads and runs its tags query. Exits non-zero if
// anything is broken.
import type { App } from "./app.ts";
import { displayPath } from "./config.ts";
import { messageOf } from "./registry.ts";
import type { Loaded } from "./run.ts";

export interface GrammarCheck {
  language: string;
  ok: boolean;
  detail: string;
}

/** grammars/check.ts (the repo-map's language table), loaded only here. */
async function checkGrammars(): Promise<GrammarCheck[]> {
  return (await import("../grammars/check.ts")).checkGrammars();
}

export async function runDoctor(loaded: Loaded, assemble: () => Promise<App>): Promise<number> {
  let failed = 0;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const mark = (ok: boolean) => (ok ? "ok  " : "FAIL");
  out(`coder ${loaded.version} (bun ${Bun.version}, ${process.platform} ${process.arch})`);
  out(`executable: ${process.execPath}`);
  out(`repository: ${loaded.gitRoot ?? `(no git repository; using ${loaded.root})`}`);
  out("");
  out("Config files:");
  if (!loaded.layers.length) out("  (none)");
  for (const layer of loaded.layers) {
    const projectish = layer.kind === "project" || layer.kind === "local";
    const trust = projectish ? (loaded.trustKeys.length ? (loaded.trusted ? `trusted (${loaded.trustKeys.join(", ")})` : `NOT trusted: ${loaded.trustKeys.join(", ")} ignored (use --trust)`) : "needs no trust") : "yours: trusted";
    out(`  ok    ${layer.kind.padEnd(8)} ${displayPath(layer.file)}  ${trust}`);
  }
  out("");
  out("Plugins:");
  try {
    const app = await assemble();
    for (const p of app.registry.plugins.values()) out(`  ok    ${p.name}  ${p.origin.startsWith("built-in") ? p.origin : displayPath(p.origin)}`);
    for (const f of app.registry.failures) {
      failed++;
      out(`  FAIL  ${f.plugin ?? "?"}  ${f.origin}: ${f.message.split("\n")[0]}`);
    }
    const kinds = [app.registry.formats.size, app.registry.context.size, app.registry.models.size, app.registry.commands.size];
    out(`  ${kinds[0]} edit formats, ${kinds[1]} context providers, ${kinds[2]} model adapters, ${kinds[3]} commands`);
  } catch (error) {
    failed++;
    out(`  FAIL  ${messageOf(error).split("\n")[0]}`);
  }
  out("");
  out("Grammars:");
  try {
    const checks = await checkGrammars();
    if (!checks.length) out("  (none embedded)");
    for (const c of checks) {
      if (!c.ok) failed++;
      out(`  ${mark(c.ok)}  ${c.language.padEnd(12)} ${c.detail}`);
    }
  } catch (error) {
    failed++;
    out(`  FAIL  grammar check could not run: ${messageOf(error).split("\n")[0]}`);
  }
  out("");
  out(failed ? `${failed} problem${failed === 1 ? "" : "s"} found` : "everything works");
  return failed ? 1 : 0;
}
