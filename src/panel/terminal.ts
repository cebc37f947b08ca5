/**
 * A sheep's live terminal over HTTP. GET …/terminal is one long answer of raw terminal bytes (a
 * chunked application/octet-stream): the pane's screen as it is now (clear, its rows with their
 * colours, the cursor put back), then every byte the pane's program writes. POST …/terminal
 * types keys into the pane. Every byte is bounded: a page that leaves MAX_TERMINAL_UNSENT unread
 * is let go (it opens the stream again and gets the screen afresh), and at most
 * MAX_TERMINAL_STREAMS are open at once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Shepherd } from "../core/shepherd.ts";
import { MAX_TERMINAL_KEYS } from "../domain/bounds.ts";
import { ShepherdError } from "../domain/errors.ts";
import type { AgentId } from "../domain/ids.ts";
import type { PaneScreen } from "../ports/runtime.ts";
import { onlyKeys } from "./body.ts";
import { COMMON_HEADERS, HttpError } from "./errors.ts";

export const MAX_TERMINAL_STREAMS = 32;
/** What one page may leave unread before its stream is ended. */
export const MAX_TERMINAL_UNSENT = 256 * 1024;
/** How often an open stream asks whether its session still holds. */
export const TERMINAL_CHECK_MS = 15_000;

/** What a terminal redraws first: cleared, the screen's rows, the cursor where the pane has it. */
export function screenBytes(screen: PaneScreen): Buffer {
  return Buffer.from(`\x1b[0m\x1b[H\x1b[2J${screen.text}\x1b[0m\x1b[${screen.cursorY + 1};${screen.cursorX + 1}H`, "utf8");
}

/** The keys of a POST …/terminal body: a string of 1 to MAX_TERMINAL_KEYS characters. */
export function keysOf(body: Record<string, unknown>): string {
  onlyKeys(body, ["keys"], "POST …/terminal");
  const keys = body.keys;
  if (typeof keys !== "string" || keys === "") throw new ShepherdError("invalid_params", `"keys" must be a non-empty string (what was typed).`);
  let n = 0;
  for (const ch of keys) {
    // for…of yields a lone surrogate by itself: no character, nothing a pane could be sent.
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) throw new ShepherdError("invalid_params", `"keys" holds a lone surrogate; send well-formed text.`);
    n++;
  }
  if (n > MAX_TERMINAL_KEYS)
    throw new ShepherdError("invalid_params", `"keys" holds ${n} characters; at most ${MAX_TERMINAL_KEYS} at once (send the rest next).`);
  return keys;
}

export async function terminalKeys(shepherd: Shepherd, id: AgentId, body: Record<string, unknown>): Promise<{ typed: number }> {
  const keys = keysOf(body);
  await shepherd.terminal.type(id, keys);
  return { typed: [...keys].length };
}

export class TerminalStreams {
  private open = 0;

  get size(): number {
    return this.open;
  }

  /** Answers the GET: the screen, then the output, until the page goes, the sheep ends, or `allowed` says no. */
  async stream(shepherd: Shepherd, id: AgentId, req: IncomingMessage, res: ServerResponse, allowed: () => boolean, head: boolean): Promise<void> {
    if (this.open >= MAX_TERMINAL_STREAMS) throw new HttpError(503, "too_many_clients", `${MAX_TERMINAL_STREAMS} terminals are open; close one first.`);
    this.open++;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    let close = () => {};
    const finish = () => {
      if (done) return;
      done = true;
      this.open--;
      clearInterval(timer);
      close();
    };
    try {
      const watch = await shepherd.terminal.watch(id, {
        output: (chunk) => {
          if (done) return;
          if (res.writableLength > MAX_TERMINAL_UNSENT) {
            res.destroy();
            return;
          }
          res.write(chunk);
        },
        end: () => res.end(),
      });
      close = () => watch.close();
      if (res.destroyed || req.destroyed) {
        finish();
        return;
      }
      res.writeHead(200, {
        ...COMMON_HEADERS,
        "content-type": "application/octet-stream",
        "x-terminal-cols": String(watch.screen.cols),
        "x-terminal-rows": String(watch.screen.rows),
        "x-accel-buffering": "no",
      });
      if (head) {
        res.end();
        finish();
        return;
      }
      req.socket.setNoDelay(true);
      res.on("close", finish);
      res.on("error", finish);
      res.write(screenBytes(watch.screen));
      timer = setInterval(() => {
        if (!allowed()) res.end();
      }, TERMINAL_CHECK_MS);
      timer.unref();
    } catch (e) {
      finish();
      throw e;
    }
  }
}
