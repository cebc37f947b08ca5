/**
 * A sheep's tmux pane as a terminal in the panel. Output: tmux's pipe-pane copies every byte the
 * pane's program writes to `cat`, which writes into a FIFO in a private directory that this process
 * reads; one pipe per pane, shared by every page that watches it, and taken down when the last one
 * leaves. pipe-pane was chosen over a control-mode client: it sends exactly the bytes the program
 * wrote (no octal escaping to undo, no client that attaches to a session and counts in its size),
 * costs one idle `cat` per watched pane, and nothing is buffered here: every chunk goes straight
 * to the watchers, each of which bounds what it leaves unsent. Keys: send-keys inside an if-shell
 * that checks the sheep's mark in the same tmux command; the text becomes hex codes and single
 * non-ASCII characters, never a word tmux would read as syntax.
 */
import { constants, openSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { execa } from "execa";
import { MAX_TERMINAL_KEYS } from "../../domain/bounds.ts";
import { ShepherdError } from "../../domain/errors.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import type { PaneRef, PaneScreen, PaneSink, PaneWatch } from "../../ports/runtime.ts";
import { MARK } from "./pane-table.ts";
import type { TmuxCli } from "./tmux-cli.ts";

/** The most of a screen capture taken: a pane of 500×200 cells with a colour change in every one is less. */
export const MAX_SCREEN_BYTES = 2 * 1024 * 1024;
/** The pane option naming the process whose pipe the pane has: one whose process is gone is replaced. */
export const PIPE_MARK = "@pi_shepherd_pipe";

/** Whether a pid runs (EPERM: it does, as another user's). The runtimes may not import the protocol's own. */
function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 1) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A path tmux hands to sh for the pipe: only these characters, so it needs no quoting in either. */
const PLAIN_PATH = /^[A-Za-z0-9_./-]+$/;

function checkPane(pane: PaneRef): void {
  if (!/^%\d+$/.test(pane.paneId) || !isWellFormedId(pane.agentId, "agent")) {
    throw new ShepherdError("invalid_params", `not a sheep's tmux pane: ${JSON.stringify(pane.paneId)}`);
  }
}

/** tmux's condition that the pane carries this sheep's mark. */
const ownedBy = (agentId: string) => `#{==:#{${MARK}},${agentId}}`;

/**
 * The tmux commands (one string, for if-shell) that type `text` into the pane: ASCII as hex codes
 * (`send-keys -H`, so control keys and tmux's own syntax characters pass as bytes), every other
 * character as a key of its own (tmux reads a lone UTF-8 character as that key; none of them is
 * syntax to tmux). Lone surrogates (no character) are refused.
 */
export function keyCommand(paneId: string, text: string): string {
  if (!/^%\d+$/.test(paneId)) throw new ShepherdError("invalid_params", `not a tmux pane: ${JSON.stringify(paneId)}`);
  const commands: string[] = [];
  let hex: string[] = [];
  let chars: string[] = [];
  const flush = () => {
    if (hex.length > 0) commands.push(`send-keys -t ${paneId} -H ${hex.join(" ")}`);
    if (chars.length > 0) commands.push(`send-keys -t ${paneId} ${chars.join(" ")}`);
    hex = [];
    chars = [];
  };
  let count = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (++count > MAX_TERMINAL_KEYS) throw new ShepherdError("invalid_params", `at most ${MAX_TERMINAL_KEYS} keys are typed at once; send the rest next.`);
    if (cp >= 0xd800 && cp <= 0xdfff) throw new ShepherdError("invalid_params", "the keys hold a lone surrogate (no character); send well-formed text.");
    if (cp < 0x80) {
      if (chars.length > 0) flush();
      hex.push(cp.toString(16).padStart(2, "0"));
    } else {
      if (hex.length > 0) flush();
      chars.push(ch);
    }
  }
  flush();
  return commands.join(" ; ");
}

/** The first line of a screen read: the mark, size and cursor, tab-separated. */
const SCREEN_FORMAT = [`#{${MARK}}`, "#{pane_width}", "#{pane_height}", "#{cursor_x}", "#{cursor_y}"].join("\t");

/** A screen read's answer: its header line, then capture-pane's rows with their escapes. */
export function parseScreen(out: string, agentId: string): PaneScreen {
  const nl = out.indexOf("\n");
  const head = (nl < 0 ? out : out.slice(0, nl)).split("\t");
  if (head[0]?.trim() !== agentId) throw notOwned(agentId);
  const [cols, rows, x, y] = head.slice(1, 5).map((n) => Number(n));
  const ok = (n: number | undefined, max: number) => Number.isSafeInteger(n) && n! >= 0 && n! <= max;
  if (!ok(cols, 10_000) || !ok(rows, 10_000) || !ok(x, 10_000) || !ok(y, 10_000)) {
    throw new ShepherdError("runtime_error", `tmux told a pane's size in words not understood: ${JSON.stringify(head.slice(1, 5).join(" ").slice(0, 80))}`);
  }
  const body = nl < 0 ? "" : out.slice(nl + 1);
  // capture-pane ends with the last row's newline: rows, not lines.
  const lines = body.replace(/\n$/, "").split("\n").slice(0, rows!);
  return { text: lines.join("\r\n"), cols: cols!, rows: rows!, cursorX: x!, cursorY: y! };
}

function notOwned(agentId: string): ShepherdError {
  return new ShepherdError("not_owned", `that pane is not the one this shepherd made for ${agentId}; no key was typed and nothing read.`);
}

interface Pipe {
  agentId: string;
  sinks: Set<PaneSink>;
  socket: Socket;
  dir: string;
  /** Set once its taking down began. */
  shutting?: Promise<void>;
}

export class PaneTerminals {
  private readonly pipes = new Map<string, Promise<Pipe>>();
  /** Pipes being taken down: closeAll waits for those too, not only the ones still held. */
  private readonly shutting = new Set<Promise<void>>();

  constructor(private readonly cli: TmuxCli) {}

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    checkPane(pane);
    if (text === "") return;
    const out = await this.cli.run(["if-shell", "-F", "-t", pane.paneId, ownedBy(pane.agentId), keyCommand(pane.paneId, text), "display-message -p no"]);
    if (out.trim() === "no") throw notOwned(pane.agentId);
  }

  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    checkPane(pane);
    const key = pane.paneId;
    let opening = this.pipes.get(key);
    if (!opening) {
      opening = this.openPipe(pane);
      this.pipes.set(key, opening);
      opening.catch(() => this.pipes.delete(key));
    }
    const pipe = await opening;
    // Its last watcher just left: it is being taken down, so this watch gets a pipe of its own.
    if (pipe.shutting) {
      await pipe.shutting;
      return this.watch(pane, sink);
    }
    if (pipe.agentId !== pane.agentId) throw notOwned(pane.agentId);
    let screen: PaneScreen;
    try {
      screen = await this.screen(pane);
    } catch (e) {
      if (pipe.sinks.size === 0) await this.shut(key, pipe);
      throw e;
    }
    // From here on every byte goes to this sink too; what was written before is in the screen.
    pipe.sinks.add(sink);
    let closed = false;
    return {
      screen,
      close: () => {
        if (closed) return;
        closed = true;
        pipe.sinks.delete(sink);
        if (pipe.sinks.size === 0) void this.shut(key, pipe);
      },
    };
  }

  /** Every watched pane's pipe taken down (the runtime is let go). */
  async closeAll(): Promise<void> {
    await Promise.all([...[...this.pipes].map(async ([key, p]) => this.shut(key, await p.catch(() => undefined))), ...this.shutting]);
  }

  private async screen(pane: PaneRef): Promise<PaneScreen> {
    const out = await this.cli.run(["display-message", "-p", "-t", pane.paneId, SCREEN_FORMAT, ";", "capture-pane", "-p", "-e", "-t", pane.paneId]);
    if (Buffer.byteLength(out) > MAX_SCREEN_BYTES)
      throw new ShepherdError("runtime_error", `the pane's screen is over ${MAX_SCREEN_BYTES} bytes; it is not shown.`);
    return parseScreen(out, pane.agentId);
  }

  private async openPipe(pane: PaneRef): Promise<Pipe> {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-term-"));
    try {
      const fifo = join(dir, "out");
      if (!PLAIN_PATH.test(fifo)) {
        throw new ShepherdError(
          "runtime_error",
          `the temporary directory ${JSON.stringify(dir)} has characters a pipe's path cannot hold; set TMPDIR to a plain path.`,
        );
      }
      await execa("mkfifo", ["-m", "600", fifo], { timeout: 5000, stdin: "ignore" });
      // Read and write: a FIFO opened for reading alone would read its end before cat opens it.
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      const socket = new Socket({ fd, readable: true, writable: false });
      socket.unref();
      const pipe: Pipe = { agentId: pane.agentId, sinks: new Set(), socket, dir };
      socket.on("data", (chunk: Buffer) => {
        for (const s of pipe.sinks) s.output(chunk);
      });
      socket.on("error", (e) => {
        for (const s of [...pipe.sinks]) s.end(`the pane's output could not be read: ${e.message}`);
        void this.shut(pane.paneId, pipe);
      });
      try {
        // A pipe still there may be one a shepherd before a /reload is taking down: asked again for a second.
        // One whose shepherd died (its mark names a pid that is gone) is ours to replace.
        for (let attempt = 1; ; attempt++) {
          const out = await this.cli.run([
            "if-shell",
            "-F",
            "-t",
            pane.paneId,
            `#{&&:${ownedBy(pane.agentId)},#{!=:#{pane_pipe},1}}`,
            // Only into the FIFO: a pipe taken down before sh ran must not leave a file in its place.
            `pipe-pane -O -t ${pane.paneId} 'test -p ${fifo} && exec cat > ${fifo}' ; set-option -p -t ${pane.paneId} ${PIPE_MARK} ${process.pid}`,
            `display-message -p -t ${pane.paneId} "no #{pane_pipe} #{${PIPE_MARK}}"`,
          ]);
          const no = /^no (\d) ?(\d*)/.exec(out.trim());
          if (!no) break;
          if (no[1] !== "1") throw notOwned(pane.agentId);
          const holder = Number(no[2]);
          if (no[2] && !processAlive(holder)) {
            await this.cli.run(["if-shell", "-F", "-t", pane.paneId, ownedBy(pane.agentId), `pipe-pane -t ${pane.paneId}`]);
            continue;
          }
          if (attempt >= 5) {
            throw new ShepherdError(
              "runtime_error",
              `pane ${pane.paneId}'s output is already piped elsewhere (tmux pipe-pane); end that pipe to watch it here.`,
            );
          }
          await sleep(200);
        }
      } catch (e) {
        socket.destroy();
        throw e;
      }
      return pipe;
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Takes a pipe down once, however many ask (the last watcher, a read error); never rejects: it runs unawaited. */
  private shut(key: string, pipe: Pipe | undefined): Promise<void> {
    if (!pipe) return Promise.resolve();
    if (!pipe.shutting) {
      const down = this.takeDown(key, pipe).catch(() => undefined);
      pipe.shutting = down;
      this.shutting.add(down);
      void down.then(() => this.shutting.delete(down));
    }
    return pipe.shutting;
  }

  private async takeDown(key: string, pipe: Pipe): Promise<void> {
    const held = this.pipes.get(key);
    if (held && (await held.catch(() => undefined)) === pipe) this.pipes.delete(key);
    pipe.sinks.clear();
    pipe.socket.destroy();
    // Only this sheep's pane's pipe is ended; a pane that went took its pipe with it.
    await this.cli
      .run(["if-shell", "-F", "-t", key, ownedBy(pipe.agentId), `pipe-pane -t ${key} ; set-option -p -u -t ${key} ${PIPE_MARK}`])
      .catch(() => undefined);
    await rm(pipe.dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }
}
