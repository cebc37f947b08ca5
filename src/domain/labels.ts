/** Labels are drawn raw in the widget, notifications and pane titles: plain text only. */
export const MAX_LABEL_LENGTH = 64;

/** C0, DEL, C1 (ESC and CSI start terminal sequences), and bidi marks and overrides that reorder text. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function labelProblem(label: string): string | undefined {
  if (label === "") return "must not be empty";
  if (oneLine(label) !== label) return "must not hold control characters";
  if ([...label].length > MAX_LABEL_LENGTH) return `must be at most ${MAX_LABEL_LENGTH} characters`;
  return undefined;
}

/** Text read from a file or a multiplexer, made safe to draw: one line, every control character a "?". */
export function oneLine(text: unknown): string {
  return String(text).replace(CONTROL, "?");
}
