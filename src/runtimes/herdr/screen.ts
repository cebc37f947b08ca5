/**
 * A herdr pane's visible screen (`pane read --source visible --format ansi`) as the panel's
 * terminal draws it. herdr renders the read from its own terminal model, but its text is still
 * the pane's, so it is held to what tmux's capture-pane can give the page: printable text and
 * colour changes (SGR), nothing else. Every other escape sequence and every control character
 * is dropped here, so no program in a pane can move the page's cursor, retitle it, set its
 * clipboard or answer for it.
 */
import type { PaneScreen } from "../../ports/runtime.ts";

/** The most of a screen read taken: tmux's bound for the same thing. */
export const MAX_SCREEN_BYTES = 2 * 1024 * 1024;
/** Rows and columns beyond these are not drawn: no headless pane is that large. */
const MAX_ROWS = 1000;
const MAX_COLS = 2000;
/** herdr's headless size before 0.8.1: a screen shorter or narrower still gets a terminal this big. */
const MIN_COLS = 80;
const MIN_ROWS = 24;

/** An SGR sequence of at most 64 parameter characters: the only escape kept. */
const SGR = /^\x1b\[[0-9;:]{0,64}m/;
/** Other escape sequences, dropped whole so their parameters do not show as text: CSI, OSC/DCS/APC/PM/SOS strings, and two-byte ones. */
const OTHER_ESCAPE = /^\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[\s\S]?)/;

/** One row of the read with only text and colours left, and how many cells of text it holds. */
function cleanRow(row: string): { text: string; width: number } {
  let text = "";
  let width = 0;
  let i = 0;
  while (i < row.length) {
    const ch = row[i]!;
    if (ch === "\x1b") {
      const rest = row.slice(i, i + 80);
      const sgr = SGR.exec(rest);
      if (sgr) {
        text += sgr[0];
        i += sgr[0].length;
        continue;
      }
      i += OTHER_ESCAPE.exec(row.slice(i))![0].length || 1;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (ch === "\t") {
      text += " ";
      width++;
    } else if (cp >= 0x20 && cp !== 0x7f && !(cp >= 0x80 && cp <= 0x9f)) {
      text += ch;
      // A surrogate pair is one cell, counted at its first half.
      if (!(cp >= 0xdc00 && cp <= 0xdfff)) width++;
    }
    i++;
  }
  return { text, width };
}

/**
 * The screen a read shows: its rows (colours kept, all else dropped), a terminal at least 80×24 and
 * as large as the text, the cursor after the last row's text (herdr's read does not say where the
 * cursor is; pi draws its own).
 */
export function screenOfRead(read: string): PaneScreen {
  const rows = read.split("\n").slice(0, MAX_ROWS).map(cleanRow);
  const last = rows.length - 1;
  const widest = Math.min(MAX_COLS, Math.max(0, ...rows.map((r) => r.width)));
  const cols = Math.max(MIN_COLS, widest);
  return {
    text: rows.map((r) => r.text).join("\r\n"),
    cols,
    rows: Math.max(MIN_ROWS, rows.length),
    cursorX: Math.min(rows[last]!.width, cols - 1),
    cursorY: last,
  };
}

/** A whole redraw of a screen, as the panel's terminal draws the first one: cleared, the rows, the cursor put back. */
export function redrawBytes(screen: PaneScreen): Buffer {
  return Buffer.from(`\x1b[0m\x1b[H\x1b[2J${screen.text}\x1b[0m\x1b[${screen.cursorY + 1};${screen.cursorX + 1}H`, "utf8");
}
