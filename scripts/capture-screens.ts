/**
 * npm run screens: runs an interactive shepherd pi in a private tmux server on the scripted model,
 * in a git repository, has it run a parallel delegation, then a background delegation whose sheep
 * asks a question, then an isolated delegation whose sheep edits files, and saves text captures of
 * what a person sees (the herd widget, progress, rendered results with their evidence, a pushed
 * question and a pushed result) to docs/screens/.
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

/** What the shepherd's scripted model says to a message pushed into its conversation. */
function answerToPush(text: string): string {
  if (text.startsWith("[pi-shepherd] Sheep")) return "The scout asks which session store to map; let me answer it.";
  if (text.startsWith("[pi-shepherd] Background")) return "The scout reported back: the redis session store is mapped.";
  return `ECHO: ${text}`;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-screens-"));
  const socket = join(dir, "tmux.sock");
  const model = await startScriptedModel({ fallback: answerToPush });
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
    /** A shepherd pi in a session of its own, so each story starts on a clean screen. */
    const shepherdIn = async (session: string) => {
      await tmux([
        ...(session === "demo" ? ["-f", "/dev/null"] : []),
        "new-session",
        "-d",
        "-s",
        session,
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
      const target = `${session}:0.0`;
      const screen = async () =>
        (await tmux(["capture-pane", "-p", "-t", target]))
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
        await tmux(["send-keys", "-t", target, "-l", text]);
        await sleep(300);
        await tmux(["send-keys", "-t", target, "Enter"]);
      };
      await until(/scripted-model/);
      return { screen, until, type, keys: (k: string) => tmux(["send-keys", "-t", target, k]) };
    };
    const save = (name: string, text: string) => writeFile(join(repoRoot, "docs", "screens", name), text + "\n");

    // 1. A parallel delegation, while it runs, when it is done, and expanded.
    const demo = await shepherdIn("demo");
    const tasks = [
      { agent: "scout", task: directive({ reply: "Auth lives in src/auth/session.ts:40-88; tokens are refreshed in middleware.ts.", delayMs: 6000 }) },
      { agent: "reviewer", task: directive({ reply: "Looks good. One nit: session.ts:52 swallows an error.\nVerdict: ready with nits.", delayMs: 9000 }) },
    ];
    await demo.type(directive({ tool: { name: "shepherd", arguments: { action: "delegate", tasks } }, afterTool: "Both sheep reported back." }));
    const during = await demo.until(/🐑 herd \(2\)[\s\S]*working/);
    const done = await demo.until(/Both sheep reported back\./, 60_000);
    await demo.keys("C-o");
    await sleep(800);
    const expanded = await demo.screen();
    await save("delegate-running.txt", during);
    await save("delegate-result.txt", done);
    await save("delegate-expanded.txt", expanded);

    // 2. Working asynchronously: a background delegation returns at once; its sheep asks a question,
    // which comes into the shepherd's conversation by itself; the reply goes back; the result follows.
    const bg = await shepherdIn("async");
    const ask = directive({
      tool: {
        name: "shepherd_message",
        arguments: { kind: "question", text: "Two session stores exist (redis and memory). Which one should I map?", awaitReply: true, timeout: 120 },
      },
      afterTool: "Mapped the redis store: src/auth/redis-store.ts:12-90 (sessions expire after 30 minutes).",
      delayMs: 1500,
    });
    await bg.type(
      directive({
        tool: { name: "shepherd", arguments: { action: "delegate", agent: "scout", task: ask, background: true } },
        afterTool: "The scout works in the background; I will tell you what it finds.",
      }),
    );
    await bg.until(/let me answer it\./, 60_000);
    await sleep(1500); // the widget refreshes once a second: let it show the sheep blocked on its question
    const question = await bg.screen();
    // The ids, as the model reads them in the pushed question.
    const flat = question.replace(/\n/g, "");
    const agentId = /"agentId":"(a_[0-9a-z]{10})"/.exec(flat)?.[1];
    const messageId = /asks (m_[0-9a-z]{10})/.exec(flat)?.[1];
    if (!agentId || !messageId) throw new Error(`no question on screen:\n${question}`);
    await bg.type(
      directive({
        tool: { name: "shepherd", arguments: { action: "reply", agentId, messageId, text: "The redis one; memory is only for tests." } },
        afterTool: "Told the scout to map the redis store.",
      }),
    );
    await bg.until(/the redis session store is mapped\./, 60_000);
    await sleep(1500); // the delegation closed its sheep: let the widget go
    const result = await bg.screen();
    await save("async-question.txt", question);
    await save("async-result.txt", result);
    process.stdout.write(
      `--- while running ---\n${during}\n\n--- result ---\n${done}\n\n--- expanded ---\n${expanded}\n\n--- a sheep's question ---\n${question}\n\n--- a pushed result ---\n${result}\n`,
    );

    // 3. Evidence, not claims: an isolated sheep edits files in a worktree of its own; its result
    // says what changed, and its worktree waits for land.
    const iso = await shepherdIn("iso");
    const fix = directive({
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
    });
    await iso.type(
      directive({
        tool: { name: "shepherd", arguments: { action: "delegate", agent: "worker", isolate: true, task: fix } },
        afterTool: "The worker's fix is ready to land.",
      }),
    );
    const isolatedRunning = await iso.until(/🐑 herd \(1\)\n {3}worker ⎇/);
    // At the start of a line: the typed prompt holds the same words.
    const isolated = await iso.until(/^ The worker's fix is ready to land\.$/m, 60_000);
    await iso.keys("C-o");
    await sleep(800);
    const isolatedExpanded = await iso.screen();
    await save("isolated-running.txt", isolatedRunning);
    await save("isolated-result.txt", isolated);
    await save("isolated-expanded.txt", isolatedExpanded);
    process.stdout.write(`--- isolated, running ---\n${isolatedRunning}\n\n--- isolated ---\n${isolated}\n\n--- isolated, expanded ---\n${isolatedExpanded}\n`);
  } finally {
    await execa("tmux", ["-S", socket, "kill-server"], { reject: false });
    await model.close();
    // The killed shepherds and sheep may still be writing their last files for a moment.
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
