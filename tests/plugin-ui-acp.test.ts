// A plugin's kit.ui.select and kit.ui.input in `coder acp`: select is a permission request whose
// options are the choices; input is an `elicitation/create` form when the client offers form
// elicitation, and otherwise the declared default, said in the thread (ACP has no other way
// to ask for free text).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { type AcpTestClient, acpClientsPerTest } from "./support/acp-client.ts";
import { makeRepo, serverPerTest } from "./engine-harness.ts";

setDefaultTimeout(120_000);

const start = acpClientsPerTest();
const server = serverPerTest();

const ASKER = `export default (kit) => ({
  apiVersion: 2,
  name: "asker",
  commands: [{
    name: "ask-me",
    summary: "ask two questions",
    async run(arg, s) {
      const depth = await kit.ui.select("Review depth?", ["quick", "thorough", "paranoid"], { default: "quick", detail: "How hard to look." });
      const title = await kit.ui.input("Title of the pull request?", { default: "Update", detail: "One line." });
      s.print("answers: " + JSON.stringify([depth, title]));
    },
  }],
});
`;

async function session(options: { answers?: string[]; forms?: acp.CreateElicitationResponse[] }): Promise<{ c: AcpTestClient; sessionId: string; ask: () => Promise<string> }> {
  const repo = makeRepo({ "a.py": "x = 1\n" });
  const plugin = join(repo.home, "asker.ts");
  writeFileSync(plugin, ASKER);
  const s = await server([]);
  const c = start(repo.root, s, { home: repo.home, args: ["--plugin", plugin], ...options });
  await c.initialize();
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: repo.root, mcpServers: [] });
  const ask = async () => {
    const from = c.updatesOf(sessionId).length;
    const result = await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/ask-me" }] });
    expect(result.stopReason).toBe("end_turn");
    return c.text(sessionId, from);
  };
  return { c, sessionId, ask };
}

describe("kit.ui in coder acp", () => {
  test("select: a permission request with one option per choice, the default marked; the picked choice is the answer, a cancel is null", async () => {
    const { c, ask } = await session({ answers: ["choice-2", "cancelled"], forms: [{ action: "accept", content: { answer: "Fix the cart" } }, { action: "decline" }] });
    expect(await ask()).toContain('answers: ["thorough","Fix the cart"]');
    const asked = c.permissions[0]!;
    expect(asked.options).toEqual([
      { optionId: "choice-1", name: "quick (default)", kind: "allow_once" },
      { optionId: "choice-2", name: "thorough", kind: "allow_once" },
      { optionId: "choice-3", name: "paranoid", kind: "allow_once" },
    ]);
    expect(asked.toolCall.title).toBe("Review depth");
    expect(JSON.stringify(asked.toolCall.content)).toContain("How hard to look.");
    // input: one text field, titled by the question, with the default.
    const form = c.elicitations[0] as acp.CreateElicitationRequest & { mode: string; requestedSchema: acp.ElicitationSchema; sessionId: string };
    expect(form.mode).toBe("form");
    expect(form.message).toBe("Title of the pull request?");
    expect(form.requestedSchema.properties?.answer).toEqual({ type: "string", title: "Title of the pull request?", description: "One line.", default: "Update" });
    // Cancelled and declined: null for both.
    expect(await ask()).toContain("answers: [null,null]");
  });

  test("a client without form elicitation: input takes the declared default, and the thread says it could not be asked", async () => {
    const { c, ask } = await session({ answers: ["choice-3"] });
    const said = await ask();
    expect(said).toContain('answers: ["paranoid","Update"]');
    expect(c.elicitations).toHaveLength(0);
    const warnings = JSON.stringify(c.updates);
    expect(warnings).toContain('Title of the pull request? -> \\"Update\\" (this front end cannot ask it; the default)');
  });
});
