// End to end on dist/coder (issue 21, item E): model replies that would write something
// wrong in silence. A model that un-ignores `.env` cannot write it or put the user's secret
// in a commit; a declined move keeps its source; a SEARCH quoting a line as committed, where
// the user has changed it since without committing, never lands over the user's change.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY, block, lastUser, mainRequests, makeRepo, runCoder, serverPerTest } from "./engine-harness.ts";
import { SCRIPT, startRepl } from "./support/repl.ts";

const server = serverPerTest();
const UNDERSTOOD = { model: "gpt-4.1", text: "Understood; I will leave it.", repeat: true };

describe.skipIf(!existsSync(BINARY))("model replies", () => {
  test(".env un-ignored by the model under --yes-always is neither written nor committed", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    repo.write(".gitignore", ".coder/\n.env\n");
    repo.git("commit", "-q", "-am", "ignore .env");
    repo.write(".env", "SECRET=hunter2\n");
    // First the .gitignore line goes and .env is edited (refused: ignored); asked again, .env once more.
    const unignore = block(".gitignore", ".env\n", "") + "\n" + block(".env", "SECRET=hunter2\n", "SECRET=hunter2\nDEBUG=1\n");
    const again = block(".env", "SECRET=hunter2\n", "SECRET=hunter2\nDEBUG=1\n");
    const s = await server([{ model: "gpt-4.1", text: unignore }, { model: "gpt-4.1", text: again }, UNDERSTOOD]);
    const r = await runCoder(repo, s, ["--yes-always", "-m", "turn on debug in .env", "app.py"]);
    expect(repo.git("log", "--all", "-p")).not.toContain("hunter2");
    expect(repo.read(".env")).toBe("SECRET=hunter2\n");
    expect(repo.read(".gitignore")).toBe(".coder/\n.env\n");
    expect(r.stderr).toContain("Not changing .gitignore");
    expect(repo.git("ls-files")).not.toContain(".env");
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("a patch move to a declined destination (.coder.json) leaves its source, and commits nothing", async () => {
    const repo = makeRepo({ "cart.py": "x = 1\n" });
    const move = "Moving it.\n\n*** Begin Patch\n*** Update File: cart.py\n*** Move to: .coder.json\n@@\n-x = 1\n+x = 2\n*** End Patch\n";
    const s = await server([{ model: "gpt-4.1", text: move }, UNDERSTOOD]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "patch", "-m", "move cart.py", "cart.py"]);
    expect(repo.read("cart.py")).toBe("x = 1\n");
    expect(r.stderr).toContain("Not changing .coder.json");
    expect(existsSync(join(repo.root, ".coder.json"))).toBe(false);
    expect(repo.git("log", "--format=%s")).toBe("initial\n");
    expect(repo.git("status", "--porcelain")).toBe("");
  });

  test("a stale SEARCH (the user changed the line since, uncommitted) is refused and the current lines reflected; the user's change stays", async () => {
    const committed = 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\nLOG_LEVEL = "info"\n';
    const repo = makeRepo({ "config.py": committed });
    // The user's own edit, not committed yet.
    repo.write("config.py", committed.replace("TIMEOUT = 30", "TIMEOUT = 60"));
    const stale = block("config.py", committed, committed.replace("RETRIES = 3", "RETRIES = 5"));
    const s = await server([{ model: "gpt-4.1", text: stale }, UNDERSTOOD]);
    const r = await runCoder(repo, s, ["-m", "retry five times", "config.py"]);
    expect(repo.read("config.py")).toContain("TIMEOUT = 60");
    expect(repo.read("config.py")).toContain("RETRIES = 3");
    expect(repo.git("log", "--format=%s")).toBe("initial\n");
    const reflection = lastUser(mainRequests(s)[1]);
    expect(reflection).toContain("config.py as it was last committed");
    expect(reflection).toContain("lines 1-5 of config.py");
    expect(reflection).toContain("TIMEOUT = 60");
    expect(r.stderr + r.stdout).toContain("your uncommitted change");
  });

  test("udiff and patch hunks quoting the committed line never land over the user's uncommitted change", async () => {
    const committed = 'import os\n# settings\nHOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\nLOG_LEVEL = "info"\n';
    const hunk = ' HOST = "localhost"\n PORT = 8080\n TIMEOUT = 30\n-RETRIES = 3\n+RETRIES = 5\n LOG_LEVEL = "info"\n';
    const udiff = `\`\`\`diff\n--- config.py\n+++ config.py\n@@ -3,5 +3,5 @@\n${hunk}\`\`\`\n`;
    const patch = `*** Begin Patch\n*** Update File: config.py\n@@ # settings\n${hunk}*** End Patch\n`;
    for (const [format, reply] of [["udiff", udiff], ["patch", patch]] as const) {
      const repo = makeRepo({ "config.py": committed });
      repo.write("config.py", committed.replace("TIMEOUT = 30", "TIMEOUT = 60"));
      const s = await server([{ model: "gpt-4.1", text: reply }, UNDERSTOOD]);
      await runCoder(repo, s, ["--edit-format", format, "-m", "retry five times", "config.py"]);
      expect(repo.read("config.py")).toContain("TIMEOUT = 60");
      if (format === "udiff") {
        // udiff narrows a hunk that does not match to its changed lines: those match the file as it is.
        expect(repo.read("config.py")).toBe(committed.replace("TIMEOUT = 30", "TIMEOUT = 60").replace("RETRIES = 3", "RETRIES = 5"));
      } else {
        expect(repo.read("config.py")).toContain("RETRIES = 3");
        const reflection = lastUser(mainRequests(s)[1]);
        expect(reflection).toContain("config.py as it was last committed");
        expect(reflection).toContain("TIMEOUT = 60");
      }
    }
  });

  test("a whole listing written from the committed file (the model's older copy) keeps the user's uncommitted change, says so, and a second ask can drop it", async () => {
    const committed = 'HOST = "localhost"\nPORT = 8080\nTIMEOUT = 30\nRETRIES = 3\nLOG_LEVEL = "info"\n';
    const repo = makeRepo({ "config.py": committed });
    repo.write("config.py", committed.replace("TIMEOUT = 30", "TIMEOUT = 60"));
    // Both replies are the committed text with RETRIES changed: the first lacks the user's TIMEOUT = 60.
    const listing = `config.py\n\`\`\`python\n${committed.replace("RETRIES = 3", "RETRIES = 5")}\`\`\`\n`;
    const s = await server([{ model: "gpt-4.1", text: listing }, { model: "gpt-4.1", text: listing }]);
    const r = await runCoder(repo, s, ["--yes-always", "--edit-format", "whole", "-m", "retry five times", "config.py"]);
    expect(r.code).toBe(0);
    expect(repo.read("config.py")).toBe(committed.replace("TIMEOUT = 30", "TIMEOUT = 60").replace("RETRIES = 3", "RETRIES = 5"));
    expect(r.stdout + r.stderr).toContain("The model's new text of config.py had the last commit's lines where you had changed line 3: your lines were kept");
    expect(r.stdout + r.stderr).toContain("They are committed now: to drop them, ask again.");
    expect(repo.git("status", "--porcelain")).toBe("");
    // Asked again, the change is committed: the same listing now drops it, as the user asked.
    const again = await runCoder(repo, s, ["--yes-always", "--edit-format", "whole", "-m", "put TIMEOUT back to 30", "config.py"]);
    expect(again.code).toBe(0);
    expect(repo.read("config.py")).toBe(committed.replace("RETRIES = 3", "RETRIES = 5"));
  });

  test.skipIf(!SCRIPT)("a .gitignore change the user allows does not make a file ignored at the start writable, nor committable", async () => {
    const repo = makeRepo({ "app.py": "print('hi')\n" });
    repo.write(".gitignore", ".coder/\n.env\n");
    repo.git("commit", "-q", "-am", "ignore .env");
    repo.write(".env", "SECRET=hunter2\n");
    const s = await server([
      { model: "gpt-4.1", text: block(".gitignore", ".env\n", ""), match: "stop ignoring .env" },
      { model: "gpt-4.1", text: block(".env", "SECRET=hunter2\n", "SECRET=hunter2\nDEBUG=1\n"), match: "turn on debug" },
      UNDERSTOOD,
    ]);
    const repl = startRepl(repo, s, ["--yes-always", "--no-pretty", "app.py"]);
    await repl.waitFor("> ");
    repl.type("stop ignoring .env");
    await repl.waitFor("which decides what git ignores");
    repl.type("y");
    await repl.waitFor("> ");
    repl.type("turn on debug in .env");
    await repl.waitFor("> ");
    repl.type("/exit");
    expect(await repl.proc.exited).toBe(0);
    expect(repo.read(".gitignore")).toBe(".coder/\n");
    expect(repo.read(".env")).toBe("SECRET=hunter2\n");
    expect(repo.git("log", "--all", "-p")).not.toContain("hunter2");
    expect(lastUser(mainRequests(s)[2])).toContain(".env is ignored by git");
  });
});
