/**
 * What the panel's terminal types (xterm's bytes: text, Enter as CR, control keys, arrow keys as
 * escape sequences), as herdr CLI calls: runs of printable text through `pane send-text` (raw,
 * no Enter), everything else through `pane send-keys` by the key names herdr documents (enter,
 * tab, esc, backspace, the arrows, ctrl+ and alt+ chords, minus). A text argument never starts
 * with a dash: herdr would read it as an option or a help request, so a leading "-" is the
 * "minus" key. A key herdr has no name for is refused before anything is typed.
 */
import { MAX_TERMINAL_KEYS } from "../../domain/bounds.ts";
import { ShepherdError } from "../../domain/errors.ts";

export type KeyStep = { text: string } | { keys: string[] };

const ARROWS: Record<string, string> = { A: "up", B: "down", C: "right", D: "left" };

/** The named key of one control character, or undefined. */
function controlKey(cp: number): string | undefined {
  if (cp === 0x0d) return "enter";
  if (cp === 0x09) return "tab";
  if (cp === 0x7f) return "backspace";
  if (cp >= 0x01 && cp <= 0x1a) return `ctrl+${String.fromCharCode(0x60 + cp)}`;
  return undefined;
}

function refused(what: string): ShepherdError {
  return new ShepherdError("invalid_params", `${what} cannot be typed into a herdr pane (herdr's send-keys has no name for it); nothing was typed.`);
}

/** The calls that type `text`, in order; throws before any is made when one key cannot be typed. */
export function keySteps(text: string): KeyStep[] {
  const chars = [...text];
  if (chars.length > MAX_TERMINAL_KEYS) throw new ShepherdError("invalid_params", `at most ${MAX_TERMINAL_KEYS} keys are typed at once; send the rest next.`);
  const steps: KeyStep[] = [];
  let run = "";
  let keys: string[] = [];
  const key = (k: string) => {
    if (run) steps.push({ text: run });
    run = "";
    keys.push(k);
  };
  const printable = (ch: string) => {
    if (keys.length > 0) steps.push({ keys });
    keys = [];
    run += ch;
  };
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) throw new ShepherdError("invalid_params", "the keys hold a lone surrogate (no character); send well-formed text.");
    if (ch === "\x1b") {
      const next = chars[i + 1];
      const arrow = (next === "[" || next === "O") && chars[i + 2] !== undefined ? ARROWS[chars[i + 2]!] : undefined;
      if (arrow) {
        key(arrow);
        i += 2;
      } else if (next === "[" && chars[i + 2] === "Z") {
        key("shift+tab");
        i += 2;
      } else if (next === undefined || next === "\x1b") {
        key("esc");
      } else if (/^[a-z0-9]$/i.test(next)) {
        key(`alt+${next}`);
        i += 1;
      } else {
        throw refused(`the escape sequence ${JSON.stringify(chars.slice(i, i + 6).join(""))}`);
      }
    } else if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
      const named = controlKey(cp);
      if (!named) throw refused(`the control character U+${cp.toString(16).padStart(4, "0")}`);
      key(named);
    } else if (ch === "-" && run === "") {
      key("minus");
    } else {
      printable(ch);
    }
  }
  if (run) steps.push({ text: run });
  if (keys.length > 0) steps.push({ keys });
  return steps;
}
