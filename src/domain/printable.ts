/**
 * Text from outside (a sheep's model, a pane, a session file read back) made safe to draw in a
 * terminal: escape sequences and control characters, which a terminal would act on, are
 * removed; tabs and newlines stay. Bidi overrides go too: they reorder what a person reads.
 *
 * Safety rests on the last step alone: no ESC, C0 (but tab and newline), DEL or C1 character is
 * left, so nothing can start a sequence. The steps before it take whole sequences out, so their
 * parameters (`2J`, a title, a link's target) are not left behind as text either:
 * - CSI, 7-bit (`ESC [`) or 8-bit (U+009B), private parameters (`?`) included;
 * - OSC (`ESC ]`, U+009D: titles, OSC 8 links, OSC 52 clipboard writes) and the string controls
 *   DCS, SOS, PM and APC (`ESC P`, `ESC X`, `ESC ^`, `ESC _`, U+0090/0098/009E/009F), ended by
 *   BEL or ST (`ESC \`, U+009C), or unterminated: then up to the end of the line, so an answer
 *   after a broken sequence is not lost with it;
 * - any other escape: ESC, intermediates (0x20–0x2F), one final character (`ESC c`, `ESC 7`, `ESC ( B`).
 */
const SEQUENCES =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u009d\u0090\u0098\u009e\u009f])[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]/g;
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}
