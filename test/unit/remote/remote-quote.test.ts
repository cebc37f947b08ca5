/**
 * The remote shell's quoting: whatever an argv holds (fast-check's strings over all of Unicode,
 * and the injection payloads of the local suite), the line remoteLine makes is read back by real
 * POSIX shells as exactly that argv, and no payload runs.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import fc from "fast-check";
import { remoteLine, remoteWord } from "../../../src/remote/link/quote.ts";
import { nameSafePayload, shellPayloads, UNICODE } from "../../support/payloads.ts";

/** The shells a remote login shell may be, of those this machine has (sh at least). */
const SHELLS = ["sh", "dash", "bash", "zsh", "ksh", "mksh"].filter((s) => spawnSync(s, ["-c", "true"]).status === 0);

/** What `shell -c line` receives as the argv after `printf`: each argument NUL-terminated. */
async function readBack(shell: string, argv: readonly string[], cwd: string): Promise<string[]> {
  const r = await execa(shell, ["-c", remoteLine(["printf", "%s\\0", "argv:", ...argv])], { cwd, stdin: "ignore", encoding: "utf8", stripFinalNewline: false });
  const parts = r.stdout.split("\0");
  parts.pop();
  assert.equal(parts.shift(), "argv:");
  return parts;
}

describe("remoteLine", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-quote-"));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it("has at least sh to read lines back with", () => {
    assert.ok(SHELLS.includes("sh"), `no sh on PATH (found: ${SHELLS.join(", ")})`);
  });

  it("every shell reads the injection payloads back exactly, and none of them runs", async () => {
    const mark = join(dir, "MARK");
    const argv = [
      ...shellPayloads(`${mark}-arg`),
      nameSafePayload(`${mark}-name`, "\n"),
      UNICODE,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal "${PATH}" is the hostile text under test
      "$HOME ${PATH} %s %n {{x}} \\ \\\\ '' \"\" ~ * ? [a] !1 !! ^x",
      "",
      "-o",
      "--",
      " leading and trailing ",
      "\t\r\n\u001b[31m\u0007",
    ];
    for (const shell of SHELLS) {
      assert.deepEqual(await readBack(shell, argv, dir), argv, `${shell} read the payloads back differently`);
    }
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith("MARK")),
      [],
      "no payload reached a shell",
    );
  });

  it("every shell reads any argv of Unicode strings back exactly (fast-check)", async () => {
    const arg = fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !s.includes("\u0000"));
    const hostile = fc.constantFrom("'", '"', "\\", "$", "`", ";", "&", "|", "\n", "#", "~", "*", "(", ")", "{", "}", "!", " ", "%", "\u00a0");
    const mixed = fc.array(fc.oneof(arg, hostile), { maxLength: 12 }).map((a) => a.join(""));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(arg, mixed), { minLength: 0, maxLength: 6 }), fc.constantFrom(...SHELLS), async (argv, shell) => {
        assert.deepEqual(await readBack(shell, argv, dir), argv);
      }),
      { numRuns: 300 },
    );
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n !== "MARK"),
      [],
    );
  });

  it("refuses what cannot arrive intact: NUL, a lone surrogate, an empty argv", () => {
    assert.throws(() => remoteWord("a\u0000b"), /\[invalid_params\] .*NUL/);
    assert.throws(() => remoteWord("a\ud800b"), /\[invalid_params\] .*surrogate/);
    assert.throws(() => remoteLine([]), /\[invalid_params\] the remote command is empty/);
  });

  it("quotes a word as one single-quoted word, a quote as '\\''", () => {
    assert.equal(remoteWord("it's"), "'it'\\''s'");
    assert.equal(remoteLine(["a b", ""]), "'a b' ''");
  });
});
