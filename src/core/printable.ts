/**
 * Text from outside (a sheep's model, a pane, a session file read back) made safe to draw in a
 * terminal: escape sequences and control characters, which a terminal would act on, are
 * removed; tabs and newlines stay. Bidi overrides go too: they reorder what a person reads.
 */
export function printable(text: string): string {
  return text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, "")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "");
}
