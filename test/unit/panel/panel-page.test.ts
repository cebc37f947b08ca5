/**
 * The panel's page as files: every one of them is served (and the modules import only each
 * other), nothing in them draws text as markup or runs inline, and the pure parts (the patch cut
 * per file, the numbers as shown) do what the page relies on. The page in a browser is the
 * panel-browser e2e.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { execa } from "execa";
import { isPagePath, PAGE_DIR } from "../../../src/panel/page.ts";

const files = async () => (await readdir(PAGE_DIR)).sort();
const read = (name: string) => readFile(join(PAGE_DIR, name), "utf8");
// The page's modules are plain JavaScript for the browser; the test loads their pure functions as they are.
type Fn<R> = (...a: unknown[]) => R;
interface PageModules {
  splitPatch: Fn<string[][]>;
  tokens: Fn<string>;
  cost: Fn<string>;
  elapsed: Fn<string>;
  firstLine: Fn<string>;
  visible: Fn<string>;
  promptRefusalText: Fn<string>;
}
const load = (name: string) => import(pathToFileURL(join(PAGE_DIR, name)).href) as Promise<PageModules>;

describe("the panel's page files", () => {
  it("every file of src/panel/page/ is served, and the page names only those", async () => {
    const names = await files();
    assert.ok(names.includes("index.html") && names.includes("app.js") && names.includes("app.css"));
    for (const name of names) assert.ok(isPagePath(name === "index.html" ? "/" : `/assets/${name}`), `${name} is served`);
    const html = await read("index.html");
    const refs = [...html.matchAll(/(?:src|href)="([^"#][^"]*)"/g)].map((m) => m[1]!);
    assert.deepEqual(refs.sort(), ["/assets/app.css", "/assets/app.js", "/assets/favicon.svg"]);
    for (const name of names.filter((n) => n.endsWith(".js"))) {
      for (const m of (await read(name)).matchAll(/^import .* from "([^"]+)";$/gm)) {
        // The terminal's library, served from its package by a fixed route (page.ts), is the one other module.
        if (name === "terminal.js" && m[1] === "/assets/xterm.mjs") {
          assert.ok(isPagePath(m[1]), "the terminal's library is served");
          continue;
        }
        assert.match(m[1]!, /^\.\/[a-z-]+\.js$/, `${name} imports only the page's own modules`);
        assert.ok(names.includes(m[1]!.slice(2)), `${name} imports ${m[1]}, a file of the page`);
      }
    }
  });

  it("no text is drawn as markup, nothing runs inline, nothing is fetched from elsewhere", async () => {
    for (const name of await files()) {
      const text = await read(name);
      if (name.endsWith(".js")) {
        assert.doesNotMatch(
          text,
          /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|\.style\.|setAttribute\("style"|javascript:/,
          name,
        );
        assert.doesNotMatch(text, /https?:\/\//, `${name} names no other origin`);
      }
      if (name.endsWith(".html")) {
        assert.doesNotMatch(text, /<script(?![^>]*\bsrc=)[^>]*>/, "no inline script");
        assert.doesNotMatch(text, /<style|\sstyle=|\son[a-z]+=/i, "no inline style or handler");
      }
      if (name.endsWith(".css")) assert.doesNotMatch(text, /@import|url\(/, `${name} loads nothing`);
    }
  });

  it("every text the page draws shows its control characters as code points: a bidi override or an escape is seen, never obeyed", async () => {
    const { visible } = await load("dom.js");
    assert.equal(visible("evil\u202Egpj.exe"), "evil⟨U+202E⟩gpj.exe");
    assert.equal(visible("a\u2066b\u2069c\u200Fd\u061Ce"), "a⟨U+2066⟩b⟨U+2069⟩c⟨U+200F⟩d⟨U+061C⟩e");
    assert.equal(visible("\u001b[2Jx\u009b\u007f"), "⟨U+001B⟩[2Jx⟨U+009B⟩⟨U+007F⟩");
    assert.equal(visible("two\nlines\tand a tab, שלום"), "two\nlines\tand a tab, שלום", "newlines, tabs and right-to-left letters are text");
    assert.equal(visible(42), "42");
  });

  it("the patch is cut at each diff --git line, one part per file in order; a path with spaces or unicode stays whole", async () => {
    const { splitPatch } = await load("diff.js");
    const patch = [
      "diff --git a/a.txt b/a.txt",
      "index 1..2 100644",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1 +1 @@",
      "-old",
      "+new",
      'diff --git "a/my d\\303\\274r/x y.txt" "b/my d\\303\\274r/x y.txt"',
      "new file mode 100644",
      "@@ -0,0 +1 @@",
      "+diff --git not a header inside a line",
      "",
    ].join("\n");
    const parts = splitPatch(patch);
    assert.equal(parts.length, 2);
    assert.deepEqual(parts[0]!.slice(-2), ["-old", "+new"]);
    assert.deepEqual(parts[1]!.slice(-1), ["+diff --git not a header inside a line"], "a + line is content, and the trailing blank is dropped");
    assert.deepEqual(splitPatch(""), []);
    assert.deepEqual(splitPatch(undefined), []);
  });

  it("a file whose type changed is one part (git writes it as two under one header): every later file keeps its own hunks", async () => {
    const { splitPatch } = await load("diff.js");
    const repo = await mkdtemp(join(tmpdir(), "pi-shepherd-typechange-"));
    try {
      const git = (...args: string[]) => execa("git", ["-c", "core.symlinks=true", ...args], { cwd: repo, stdin: "ignore" });
      await git("init", "-q");
      await writeFile(join(repo, "f"), "a file\n");
      await writeFile(join(repo, "g"), "one\n");
      await git("add", ".");
      await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one");
      await rm(join(repo, "f"));
      await symlink("elsewhere", join(repo, "f"));
      await writeFile(join(repo, "g"), "two\n");
      await git("add", ".");
      await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two");
      const raw = (await git("diff-tree", "-r", "--no-renames", "--raw", "HEAD~1", "HEAD")).stdout;
      assert.match(raw, /\tf\n.*\tg$/s);
      assert.match(raw, / T\tf/, "git lists f once, as a type change");
      const patch = (await git("diff-tree", "-r", "-p", "--no-renames", "--no-color", "HEAD~1", "HEAD")).stdout;
      assert.equal(patch.match(/^diff --git a\/f b\/f$/gm)?.length, 2, "and writes it twice in the patch");
      const parts = splitPatch(patch);
      assert.equal(parts.length, 2, "one part for each row of the list");
      assert.ok(parts[0]!.includes("+elsewhere") && parts[0]!.includes("-a file"), "f's part holds both of its halves");
      assert.ok(parts[1]!.includes("-one") && parts[1]!.includes("+two"), "g's part holds g's hunk");
      assert.ok(!parts[1]!.some((l) => l.includes("elsewhere")), "and nothing of f");
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });

  it("numbers as the herd shows them: tokens, cost, how long, first lines", async () => {
    const { tokens, cost, elapsed, firstLine } = await load("dom.js");
    assert.deepEqual([tokens(999), tokens(1234), tokens(56_789), tokens(2_500_000), tokens(undefined)], ["999", "1.2k", "57k", "2.5M", "–"]);
    assert.deepEqual([cost(0), cost(0.0042), cost(1.5), cost(undefined)], ["$0", "$0.0042", "$1.50", "–"]);
    const now = Date.parse("2026-01-01T12:00:00Z");
    const ago = (s: number) => new Date(now - s * 1000).toISOString();
    assert.deepEqual(
      [elapsed(ago(5), now), elapsed(ago(192), now), elapsed(ago(7500), now), elapsed(ago(3 * 86400 + 4 * 3600), now), elapsed("not a time", now)],
      ["5s", "3m 12s", "2h 05m", "3d 4h", "–"],
    );
    assert.equal(firstLine("one\ntwo"), "one");
    assert.equal(firstLine("x".repeat(200), 10), `${"x".repeat(9)}…`);
  });

  it("a busy sheep's refusal names the page's own buttons, Steer and Follow-up, not the API's deliverAs", async () => {
    const { promptRefusalText } = await load("dom.js");
    const api =
      '[prompt_pending] sheep a_x (alpha) is still working on p_y; wait for it, or send with deliverAs "steer" (into its running turn) or "followUp" (queued behind it).';
    const said = promptRefusalText("prompt_pending", "alpha", api);
    assert.equal(
      said,
      "alpha is still working on a prompt. Choose Steer (into its running turn) or Follow-up (queued behind it) and Send again, or wait for its answer.",
    );
    assert.doesNotMatch(said, /deliverAs|followUp/);
    assert.equal(promptRefusalText("queue_full", "alpha", "[queue_full] eight queued"), "[queue_full] eight queued", "any other refusal as sent");
    const sheepJs = await read("sheep.js");
    assert.match(sheepJs, /promptRefusalText\(err\?\.code,/, "the prompt form shows it");
    assert.match(sheepJs, /mode\("steer", "Steer",/);
    assert.match(sheepJs, /mode\("followUp", "Follow-up",/);
  });
});
