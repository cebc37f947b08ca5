/**
 * npm run screens: runs an interactive shepherd pi in a private tmux server on the scripted model,
 * in a git repository, has it run a parallel delegation and an isolated one whose sheep edits
 * files, and saves text captures of what a person sees (the herd widget, progress, rendered
 * results with their evidence) to docs/screens/.
 */
import { execa } from "execa";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAgentDir } from "../test/support/agent-dir.js";
import { makeRepo } from "../test/support/git-repo.js";
import { node22, piCli, repoRoot } from "../test/support/rpc-shepherd.js";
import { directive, startScriptedModel } from "../test/support/scripted-model.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-screens-"));
  const socket = join(dir, "tmux.sock");
  const model = await startScriptedModel();
  const tmux = async (args: string[]) => String((await execa("tmux", ["-S", socket, ...args], { stdin: "ignore" })).stdout);
  try {
    const agentDir = await writeAgentDir(model.baseUrl, join(dir, "agent"));
    const work = await makeRepo(join(dir, "work"), {
      "src/auth/session.ts": "export function refresh(token: string) {\n  try {\n    return renew(token);\n  } catch {}\n}\n",
      "README.md": "# demo\n",
    });
    const env = [
      `PI_CODING_AGENT_DIR=${agentDir}`,
      "PI_OFFLINE=1",
      "PI_SKIP_VERSION_CHECK=1",
      "PI_SHEPHERD_RUNTIME=tmux",
      `PI_SHEPHERD_TMUX_SOCKET=${socket}`,
      `PATH=${join(repoRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    ].flatMap((e) => ["-e", e]);
    await tmux([
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "demo",
      "-x",
      "120",
      "-y",
      "40",
      "-c",
      work,
      ...env,
      node22,
      piCli,
      "-e",
      join(repoRoot, "extensions", "shepherd.ts"),
    ]);
    const screen = async () =>
      (await tmux(["capture-pane", "-p", "-t", "demo:0.0"]))
        .replace(/\s+$/gm, "")
        .replace(/\n{3,}/g, "\n\n")
        .trim();
    const until = async (re: RegExp, ms = 30_000) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const s = await screen();
        if (re.test(s)) return s;
        await sleep(200);
      }
      throw new Error(`screen never showed ${re}:\n${await screen()}`);
    };
    const type = async (text: string) => {
      await tmux(["send-keys", "-t", "demo:0.0", "-l", text]);
      await sleep(300);
      await tmux(["send-keys", "-t", "demo:0.0", "Enter"]);
    };
    await until(/scripted-model/);
    const tasks = [
      { agent: "scout", task: directive({ reply: "Auth lives in src/auth/session.ts:40-88; tokens are refreshed in middleware.ts.", delayMs: 6000 }) },
      { agent: "reviewer", task: directive({ reply: "Looks good. One nit: session.ts:52 swallows an error.\nVerdict: ready with nits.", delayMs: 9000 }) },
    ];
    await type(directive({ tool: { name: "shepherd", arguments: { action: "delegate", tasks } }, afterTool: "Both sheep reported back." }));
    const during = await until(/🐑 herd \(2\)[\s\S]*working/);
    const done = await until(/Both sheep reported back\./, 60_000);
    await tmux(["send-keys", "-t", "demo:0.0", "C-o"]);
    await sleep(800);
    const expanded = await screen();
    await writeFile(join(repoRoot, "docs", "screens", "delegate-running.txt"), during + "\n");
    await writeFile(join(repoRoot, "docs", "screens", "delegate-result.txt"), done + "\n");
    await writeFile(join(repoRoot, "docs", "screens", "delegate-expanded.txt"), expanded + "\n");

    // An isolated sheep that edits files: its result carries the evidence, its worktree waits for land.
    await tmux(["send-keys", "-t", "demo:0.0", "C-o"]); // back to collapsed
    const fix = {
      rounds: [
        [
          {
            name: "edit",
            arguments: { path: "src/auth/session.ts", edits: [{ oldText: "  } catch {}", newText: "  } catch (e) {\n    log.warn(e);\n    throw e;\n  }" }] },
          },
        ],
        [
          {
            name: "write",
            arguments: { path: "src/auth/session.test.ts", content: "test('refresh rethrows', () => {\n  expect(() => refresh('bad')).toThrow();\n});\n" },
          },
        ],
      ],
      afterTool: "Fixed: session.ts no longer swallows the error; added a test.",
      delayMs: 2500,
    };
    await type(
      directive({
        tool: { name: "shepherd", arguments: { action: "delegate", agent: "worker", isolate: true, task: directive(fix) } },
        afterTool: "The worker's fix is ready to land.",
      }),
    );
    const isolatedRunning = await until(/🐑 herd \(1\)\n {3}worker ⎇/);
    // At the start of a line: the typed prompt holds the same words.
    const isolated = await until(/^ The worker's fix is ready to land\.$/m, 60_000);
    await tmux(["send-keys", "-t", "demo:0.0", "C-o"]);
    await sleep(800);
    const isolatedExpanded = await screen();
    await writeFile(join(repoRoot, "docs", "screens", "isolated-running.txt"), isolatedRunning + "\n");
    await writeFile(join(repoRoot, "docs", "screens", "isolated-result.txt"), isolated + "\n");
    await writeFile(join(repoRoot, "docs", "screens", "isolated-expanded.txt"), isolatedExpanded + "\n");
    process.stdout.write(
      `--- while running ---\n${during}\n\n--- result ---\n${done}\n\n--- expanded ---\n${expanded}\n\n--- isolated, running ---\n${isolatedRunning}\n\n--- isolated ---\n${isolated}\n\n--- isolated, expanded ---\n${isolatedExpanded}\n`,
    );
  } finally {
    await execa("tmux", ["-S", socket, "kill-server"], { reject: false });
    await model.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
