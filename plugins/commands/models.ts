// Model commands: /models [FILTER], /weak-model, /editor-model, /reasoning-effort and
// /think-tokens. Each shows the current value without an argument and sets it (for
// the rest of the session) with one.
import type { ModelInfo, Session, SlashCommand } from "../../core/plugin.ts";

/** Which reasoning settings a model takes, in words. */
export function reasoningTaken(info: ModelInfo): string {
  const caps = info.capabilities;
  const taken: string[] = [];
  if (caps.reasoningEffort) taken.push(caps.reasoningLevels ? `reasoning effort (${caps.reasoningLevels.join(", ")})` : "reasoning effort");
  if (caps.thinkingTokens) taken.push("a thinking budget");
  return taken.join(" and ");
}

function table(rows: string[][]): string {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] as number))).join("  ").trimEnd()).join("\n");
}

/** Set a setting for the session; errors name the command. */
function setting(s: Session, key: string, value: string | undefined, command: string): void {
  s.setOption(key, value, `/${command}`);
}

export function modelCommands(): SlashCommand[] {
  const roleModel = (name: string, role: "weak" | "editor", key: string, what: string): SlashCommand => ({
    name,
    summary: `show the ${what}, or switch it for this session`,
    usage: `/${name} [MODEL]`,
    run(arg, s) {
      const model = arg.trim();
      if (model) setting(s, key, model, name);
      s.print(`${role === "weak" ? "Weak" : "Editor"} model: ${s.modelFor(role)}.`);
    },
  });

  const models: SlashCommand = {
    name: "models",
    summary: "list the models coder knows (those whose name contains FILTER)",
    usage: "/models [FILTER]",
    run(arg, s) {
      const needle = arg.trim().toLowerCase();
      const found = s.listModels().filter((m) => m.name.toLowerCase().includes(needle));
      if (!found.length) return s.warn(needle ? `No model matches "${arg.trim()}".` : "No model adapter lists any model.");
      const rows = [["model", "context", "format", "$/M in/out", "takes"]];
      for (const m of found) rows.push([m.name, String(m.contextWindow), m.editFormat, `${m.prices.input}/${m.prices.output}`, reasoningTaken(m) || "-"]);
      s.print(table(rows));
    },
  };

  const reasoningEffort: SlashCommand = {
    name: "reasoning-effort",
    summary: "show the reasoning effort, or set it (low, medium, high) for the models that take it",
    usage: "/reasoning-effort [low|medium|high|off]",
    complete: (arg) => ["low", "medium", "high", "off"].filter((v) => v.startsWith(arg.trim())),
    run(arg, s) {
      const level = arg.trim().toLowerCase();
      if (level) setting(s, "reasoningEffort", level === "off" ? undefined : level, "reasoning-effort");
      const now = s.options.reasoningEffort;
      s.print(now ? `Reasoning effort: ${String(now)}.` : "Reasoning effort: not sent (the model's default).");
      if (now && !s.model.capabilities.reasoningEffort) s.warn(`${s.model.name} does not take a reasoning effort: it is not sent to this model.`);
    },
  };

  const thinkTokens: SlashCommand = {
    name: "think-tokens",
    summary: "show the thinking-token budget, or set it (e.g. 8k, 0.5M; 0 turns thinking off) for the models that take one",
    usage: "/think-tokens [N|off]",
    run(arg, s) {
      const typed = arg.trim();
      if (typed) setting(s, "thinkingTokens", typed === "off" ? undefined : typed, "think-tokens");
      const now = s.options.thinkingTokens;
      s.print(typeof now === "number" ? `Thinking budget: ${now.toLocaleString("en-US")} tokens${now === 0 ? " (thinking off)" : ""}.` : "Thinking budget: not sent (the model's default).");
      if (typeof now === "number" && !s.model.capabilities.thinkingTokens) s.warn(`${s.model.name} does not take a thinking budget: it is not sent to this model.`);
    },
  };

  return [models, roleModel("weak-model", "weak", "weakModel", "weak model (commit messages, history summaries)"), roleModel("editor-model", "editor", "editorModel", "editor model (architect's edits)"), reasoningEffort, thinkTokens];
}
