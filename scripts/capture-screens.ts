/**
 * npm run screens: runs an interactive shepherd pi in a private tmux server on the scripted model
 * (the same TuiShepherd the screen tests use) and saves text captures of what a person sees to
 * docs/screens/: /shepherd answers kept in the transcript, a wait's progress beside the herd
 * widget, a parallel delegation to two sheep of one agent, an expanded chain, read, working
 * asynchronously (a background delegation whose sheep asks a question; a pushed result), and an
 * isolated delegation whose sheep edits files (its evidence; its worktree waits for land). The
 * shepherd works in a git repository.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeAgentDir } from "../test/support/e2e-env.ts";
import { makeRepo } from "../test/support/git-repo.ts";
import { repoRoot } from "../test/support/rpc-shepherd.ts";
import { directive, startScriptedModel } from "../test/support/scripted-model.ts";
import { TuiShepherd } from "../test/support/tui-shepherd.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out = join(repoRoot, "docs", "screens");

/** What the shepherd's scripted model says to a message pushed into its conversation. */
function answerToPush(text: string): string {
  if (text.startsWith("[pi-shepherd] Sheep")) return "The scout asks which session store to map; let me answer it.";
  if (text.startsWith("[pi-shepherd] Background")) return "The scout reported back: the redis session store is mapped.";
  return `ECHO: ${text}`;
}

/** A screen with its runs of blank lines made one. */
function collapse(text: string): string {
  return text.replace(/\n{3,}/g, "\n\n").trim();
}

/** The screen from the last line that matches `from` down, blank runs collapsed. */
function cut(screen: string, from: RegExp): string {
  const lines = screen.split("\n");
  let start = 0;
  lines.forEach((l, i) => {
    if (from.test(l)) start = i;
  });
  return collapse(lines.slice(start).join("\n"));
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-screens-"));
  const model = await startScriptedModel({ fallback: answerToPush });
  const agentDir = await makeAgentDir(join(dir, "agent"), model.baseUrl, { agents: {} });
  const work = await makeRepo(join(dir, "work"), {
    "src/auth/session.ts": "export function refresh(token: string) {\n  try {\n    return renew(token);\n  } catch {}\n}\n",
    "README.md": "# demo\n",
  });
  await mkdir(out, { recursive: true });
  const tui = await TuiShepherd.start({ agentDir, cwd: work, width: 120, height: 40 });
  let bg: TuiShepherd | undefined;
  let iso: TuiShepherd | undefined;
  const saved: string[] = [];
  const save = async (name: string, text: string) => {
    await writeFile(join(out, name), `${text}\n`);
    saved.push(`--- ${name} ---\n${text}\n`);
  };
  let turn = 0;
  /** The model calls the tool; resolves with a test for the end of that turn (its last words on a line of their own). */
  const tool = async (args: Record<string, unknown>, words = `turn ${++turn} done`) => {
    await tui.type(directive({ tool: { name: "shepherd", arguments: args }, afterTool: words }));
    return (s: string) => s.split("\n").some((l) => l.trim() === words);
  };
  const pending = async (label: string) => {
    const state = JSON.parse(await readFile(join(agentDir, "pi-shepherd", "state.json"), "utf8")) as {
      agents: { label: string; state: string; activePromptId?: string }[];
    };
    return state.agents.find((a) => a.label === label && a.state !== "closed")?.activePromptId;
  };
  try {
    await tui.until(/scripted-model/);

    // /shepherd answers stay: the overview, a start, the herd.
    await tui.type("/shepherd");
    await tui.until(/\/shepherd <subcommand>/);
    await tui.type("/shepherd start scout --label recon");
    await tui.until(/Started "recon"/, 60_000);
    await tui.type("/shepherd herd");
    await save("command-output.txt", cut(await tui.until(/Herd \(1\):/), /^ \/shepherd$/));

    // A wait: its progress and the herd widget on one clock.
    await tui.until(
      await tool({ action: "prompt", agentId: "recon", message: directive({ reply: "Sessions are set in src/auth/session.ts:40.", delayMs: 9000 }) }),
      60_000,
    );
    await sleep(2000);
    const waited = await tool({ action: "wait", promptId: await pending("recon"), timeout: 60 });
    await save("wait-running.txt", cut(await tui.until(/⏳ recon · scout · working [3-9]s/, 30_000), /shepherd wait/));
    await save("wait-result.txt", cut(await tui.until(waited, 60_000), /shepherd wait/));

    // read: the sheep's conversation from its session file.
    await tui.type("/shepherd read recon");
    await save("read.txt", cut(await tui.until(/The last turn of recon/, 30_000), /^ \/shepherd read recon$/));

    // A parallel delegation to two sheep of one agent, told apart by label.
    const tasks = [
      { agent: "scout", task: directive({ reply: "Auth lives in src/auth/session.ts:40-88; tokens are refreshed in middleware.ts.", delayMs: 6000 }) },
      { agent: "scout", task: directive({ reply: "Tests for it: test/auth.test.ts.\nTwo are skipped.", delayMs: 8000 }) },
    ];
    const delegated = await tool({ action: "delegate", tasks }, "Both sheep reported back.");
    await save("delegate-running.txt", cut(await tui.until(/⏳ scout-2 · scout · working [2-9]s/, 60_000), /shepherd delegate/));
    await save("delegate-result.txt", cut(await tui.until(delegated, 60_000), /shepherd delegate/));

    // A chain: {previous} stays in its header, and Ctrl+O shows each task whole.
    const chained = await tool({
      action: "delegate",
      chain: [
        { agent: "scout", task: directive({ reply: "The session cookie is set in src/auth/session.ts:52." }) },
        { agent: "scout", task: "Check what the scout found, then list every caller of the function it names and how each handles errors: {previous}" },
      ],
    });
    await tui.until(chained, 60_000);
    await tui.keys("C-o");
    await sleep(800);
    await save("chain-expanded.txt", cut(await tui.screen(), /shepherd delegate chain/));
    await tui.keys("C-o");

    // Working asynchronously, in a shepherd of its own (a clean screen): a background delegation
    // returns at once; its sheep asks a question, which comes into the shepherd's conversation by
    // itself; the reply goes back; the result follows.
    bg = await TuiShepherd.start({ agentDir, cwd: work, width: 120, height: 40 });
    await bg.until(/scripted-model/);
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
    await save("async-question.txt", collapse(question));
    await save("async-result.txt", collapse(await bg.screen()));

    // Evidence, not claims: an isolated sheep edits files in a worktree of its own; its result
    // says what changed, and its worktree waits for land.
    iso = await TuiShepherd.start({ agentDir, cwd: work, width: 120, height: 40 });
    await iso.until(/scripted-model/);
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
    await save("isolated-running.txt", collapse(await iso.until(/🐑 herd \(1\)\n {3}worker ⎇/, 60_000)));
    // At the start of a line: the typed prompt holds the same words.
    await save("isolated-result.txt", collapse(await iso.until(/^ The worker's fix is ready to land\.$/m, 60_000)));
    await iso.keys("C-o");
    await sleep(800);
    await save("isolated-expanded.txt", collapse(await iso.screen()));
    process.stdout.write(saved.join("\n"));
  } finally {
    await iso?.stop();
    await bg?.stop();
    await tui.stop();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
