import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { printable } from "../../../src/domain/printable.ts";

const ESC = "\u001b";
const BEL = "\u0007";
const ST = `${ESC}\\`;

describe("printable: nothing a terminal would act on is left, nor the parameters of what was taken out", () => {
  const cases: [string, string, string][] = [
    ["OSC 0 title, BEL-terminated", `a${ESC}]0;PWNED${BEL}b`, "ab"],
    ["OSC 2 title, ST-terminated", `a${ESC}]2;PWNED${ST}b`, "ab"],
    ["OSC 8 link: the target goes with it, the link text stays", `${ESC}]8;;https://evil.example/x${ST}click${ESC}]8;;${ST}`, "click"],
    ["OSC 52 clipboard write", `x${ESC}]52;c;cm0gLXJmIH4=${BEL}y`, "xy"],
    ["unterminated OSC: to the end of its line, the next line kept", `ans${ESC}]0;PWNED\nnext line`, "ans\nnext line"],
    ["unterminated OSC at the end", `ans${ESC}]52;c;AAAA`, "ans"],
    ["CSI clear screen", `a${ESC}[2Jb`, "ab"],
    ["CSI cursor moves", `a${ESC}[10;1Hb${ESC}[Ac${ESC}[3Dd`, "abcd"],
    ["CSI private parameters", `a${ESC}[?1049h${ESC}[?25lb`, "ab"],
    ["SGR blink and red", `${ESC}[5;31mred${ESC}[0m`, "red"],
    ["ESC c (reset)", `a${ESC}cb`, "ab"],
    ["ESC 7 / ESC 8 (save and restore the cursor)", `a${ESC}7b${ESC}8c`, "abc"],
    ["ESC ( 0 (line drawing charset)", `a${ESC}(0b`, "ab"],
    ["DCS to ST", `a${ESC}Pq#0;2;0;0;0${ST}b`, "ab"],
    ["tmux passthrough DCS holding an OSC 52", `a${ESC}Ptmux;${ESC}${ESC}]52;c;AAAA${BEL}${ST}b`, "ab"],
    ["APC", `a${ESC}_Gf=100;AAAA${ST}b`, "ab"],
    ["PM", `a${ESC}^private${ST}b`, "ab"],
    ["SOS", `a${ESC}Xstring${ST}b`, "ab"],
    ["8-bit CSI (U+009B)", "a\u009b2Jb\u009b?1049hc", "abc"],
    ["8-bit OSC (U+009D) ended by 8-bit ST (U+009C)", "a\u009d0;PWNED\u009cb", "ab"],
    ["8-bit OSC ended by BEL", `a\u009d2;PWNED${BEL}b`, "ab"],
    ["8-bit DCS, APC, PM", "a\u0090q\u009cb\u009fx\u009cc\u009ey\u009cd", "abcd"],
    ["other C1 controls", "a\u0085b\u008dc\u0084d", "abcd"],
    ["C0 controls but tab and newline; DEL", `a\rb\u0008c\u0000d${BEL}e\u007ff\tg\nh`, "abcdef\tg\nh"],
    ["bidi overrides", "a\u202eb\u2066c", "abc"],
    ["a lone ESC at the end", `a${ESC}`, "a"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const out = printable(input);
      assert.equal(out, expected);
      assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    });
  }

  it("plain text, unicode and emoji pass unchanged", () => {
    const text = "🐑 herd (2) · ⎇ worktree — “quotes” ✓\n\tindented";
    assert.equal(printable(text), text);
  });
});
