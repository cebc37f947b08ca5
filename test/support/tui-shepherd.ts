/**
 * A real pi shepherd in pi's interactive TUI, in a private tmux server, driven the way a person
 * drives it: keys typed into its pane, the screen read with capture-pane. Its sheep open in
 * windows of the same server. Ended by its socket, never by process name.
 */
import { execa } from "execa";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pidAlive } from "./leftovers.ts";
import { node22, piCli, repoRoot } from "./rpc-shepherd.ts";
import { directive } from "./scripted-model.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface TuiOptions {
  agentDir: string;
  cwd: string;
  width?: number;
  height?: number;
  /** Another tmux server's socket for the sheep (default: the shepherd's own), so what a sheep's own pane does stays there. */
  sheepSocket?: string;
}

export class TuiShepherd {
  private constructor(
    readonly dir: string,
    readonly socket: string,
  ) {}

  /** The shepherd's pane: window 0 of the session "shepherd". */
  readonly target = "shepherd:0.0";
  /** The shepherd model's turns this driver started, each ended by words of its own. */
  private turns = 0;

  static async start(o: TuiOptions): Promise<TuiShepherd> {
    const which = await execa("tmux", ["-V"], { reject: false });
    if (which.exitCode !== 0) throw new Error("tmux is required for these tests; install it (apt-get install tmux)");
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-tui-"));
    const t = new TuiShepherd(dir, join(dir, "tmux.sock"));
    const env = [
      `PI_CODING_AGENT_DIR=${o.agentDir}`,
      "PI_OFFLINE=1",
      "PI_SKIP_VERSION_CHECK=1",
      "PI_SHEPHERD_RUNTIME=tmux",
      `PI_SHEPHERD_TMUX_SOCKET=${o.sheepSocket ?? t.socket}`,
      `PATH=${join(repoRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    ].flatMap((e) => ["-e", e]);
    const size = ["-x", String(o.width ?? 200), "-y", String(o.height ?? 50)];
    await t.tmux([
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "shepherd",
      ...size,
      "-c",
      o.cwd,
      ...env,
      node22,
      piCli,
      "-e",
      join(repoRoot, "extensions", "shepherd.ts"),
    ]);
    // Sheep windows must not shrink the shepherd's: each window keeps its own size.
    return t;
  }

  async tmux(args: string[]): Promise<string> {
    return String((await execa("tmux", ["-S", this.socket, ...args], { stdin: "ignore" })).stdout);
  }

  /** What the pane shows now, each line's trailing blanks trimmed. */
  async screen(target = this.target): Promise<string> {
    return (await this.tmux(["capture-pane", "-p", "-t", target])).replace(/[ \t]+$/gm, "");
  }

  /** Polls the screen until it matches; the deadline bounds waiting, it claims no timing. */
  async until(test: RegExp | ((screen: string) => boolean), ms = 60_000, target = this.target): Promise<string> {
    const ok = typeof test === "function" ? test : (s: string) => test.test(s);
    const end = Date.now() + ms;
    for (;;) {
      const s = await this.screen(target);
      if (ok(s)) return s;
      if (Date.now() > end) throw new Error(`the screen never showed ${String(test)}:\n${s}`);
      await sleep(150);
    }
  }

  /**
   * Types text into the editor as keys and submits it, pressing Enter again until the editor is
   * empty: an open completion menu takes an Enter (pi's own commands' menus still do; /shepherd
   * offers none for a word typed whole, which test/e2e/command-enter.test.ts holds to one Enter).
   */
  async type(text: string): Promise<void> {
    await this.tmux(["send-keys", "-t", this.target, "-l", text]);
    await sleep(200);
    for (let i = 0; i < 5; i++) {
      await this.tmux(["send-keys", "-t", this.target, "Enter"]);
      await sleep(300);
      if ((await this.editorText()) === "") return;
    }
    throw new Error(`the editor kept "${await this.editorText()}" after Enter`);
  }

  /**
   * Has the shepherd's model call the tool with these arguments. Returns a test for the screen that
   * the turn has ended: the model's last words on a line of their own (the typed directive holds
   * them too, inside its JSON).
   */
  async tool(args: Record<string, unknown>): Promise<(screen: string) => boolean> {
    const words = `turn ${++this.turns} done`;
    await this.type(directive({ tool: { name: "shepherd", arguments: args }, afterTool: words }));
    return (s) => s.split("\n").some((l) => l.trim() === words);
  }

  /** tool(), then the screen once that turn has ended. */
  async toolDone(args: Record<string, unknown>): Promise<string> {
    return this.until(await this.tool(args), 120_000);
  }

  /** The text in pi's editor: the lines between the last two rules of the screen. */
  async editorText(): Promise<string> {
    const lines = (await this.screen()).split("\n");
    const rules = lines.flatMap((l, i) => (/^─{10,}/.test(l) || /^── .* ─{10,}/.test(l) ? [i] : []));
    if (rules.length < 2) return "";
    return lines
      .slice(rules[rules.length - 2]! + 1, rules[rules.length - 1])
      .join("\n")
      .trim();
  }

  async keys(...keys: string[]): Promise<void> {
    await this.tmux(["send-keys", "-t", this.target, ...keys]);
  }

  /** Ends the server (every pane in it, sheep included) and removes its directory. */
  /**
   * Ends the tmux server and waits for the pi it ran to be gone: pi takes the hangup as a quit and
   * writes the shepherd's records on its way out, so a caller removing the agent dir right after
   * would race it. A pi still there after 10 s is killed, by its pid.
   */
  async stop(): Promise<void> {
    const listed = await execa("tmux", ["-S", this.socket, "list-panes", "-a", "-F", "#{pane_pid}"], { reject: false, stdin: "ignore" });
    const pids = String(listed.stdout ?? "")
      .split("\n")
      .filter((l) => /^\d+$/.test(l))
      .map(Number);
    await execa("tmux", ["-S", this.socket, "kill-server"], { reject: false, stdin: "ignore" });
    for (let i = 0; i < 100 && pids.some(pidAlive); i++) await new Promise((r) => setTimeout(r, 100));
    for (const pid of pids.filter(pidAlive)) process.kill(pid, "SIGKILL");
    await rm(this.dir, { recursive: true, force: true });
  }
}
