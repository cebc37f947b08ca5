/**
 * Every relative link in the repository's Markdown files (README.md, spec.md, PLAN.md, docs/, the bundled
 * agents/, any other *.md outside node_modules and dot directories) resolves: the file (or directory) it
 * names exists, and a `#anchor` into a Markdown file names one of its headings as GitHub slugs them. Links
 * in code blocks and code spans are text, not links; addresses with a scheme (https:, mailto:) are not
 * looked at.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../support/rpc-shepherd.ts";

/** Every Markdown file under `root`, the front page, the contract and the plan first, then the rest by path.
 * node_modules and dot directories (.git, .ci, .scratch) hold no documents of ours. */
function documents(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir === "" ? entry.name : join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(path);
      } else if (entry.isFile() && entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk("");
  const first = ["README.md", "spec.md", "PLAN.md"].filter((name) => found.includes(name));
  return first.concat(found.filter((name) => !first.includes(name)).sort());
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (opener && (fence === undefined || opener.startsWith(fence))) {
      fence = fence === undefined ? opener : undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces made hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a Markdown file's headings give, a repeated one numbered `-1`, `-2`, … as GitHub does. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Paragraphs outside fenced code blocks (runs of lines with no blank or fence between them), each with the
 * 1-based number of its first line: a link's text may wrap onto the next line, a code span too. */
function paragraphs(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let last = -1;
  for (const { line, text: content } of proseLines(text)) {
    const open = out.at(-1);
    if (content.trim() === "") last = -1;
    else if (open && last === line - 1) {
      open.text += `\n${content}`;
      last = line;
    } else {
      out.push({ line, text: content });
      last = line;
    }
  }
  return out;
}

/** The link targets of one paragraph, with their lines: inline links and images, reference definitions, HTML href and src. */
function targets(paragraph: { line: number; text: string }): { line: number; text: string; target: string }[] {
  const prose = paragraph.text.replace(/(`+)[^`]*?\1/g, (span) => (/\]\(/.test(span) ? "" : span.replace(/[[\]()]/g, " ")));
  const lineAt = (index: number) => paragraph.line + (prose.slice(0, index).match(/\n/g)?.length ?? 0);
  const out: { line: number; text: string; target: string }[] = [];
  const found = (index: number, text: string, target: string) => out.push({ line: lineAt(index), text: text.replace(/\s*\n\s*/g, " ").trim(), target });
  for (const m of prose.matchAll(/!?\[((?:[^\]\\]|\\.)*)\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) found(m.index, m[0], m[2]!);
  for (const m of prose.matchAll(/^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) found(m.index, m[0], m[1]!);
  for (const m of prose.matchAll(/<(?:a|img)\s[^>]*\b(?:href|src)="([^"]+)"/gi)) found(m.index, m[0], m[1]!);
  return out;
}

/** Each link of `files` (paths under `root`) that does not resolve, as `file:line: link: why`. */
function brokenLinks(root: string, files: string[]): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const headingsOf = (path: string) => {
    const found = anchorsOf.get(path) ?? anchors(readFileSync(path, "utf8"));
    anchorsOf.set(path, found);
    return found;
  };
  for (const file of files) {
    const path = join(root, file);
    for (const paragraph of paragraphs(readFileSync(path, "utf8"))) {
      for (const { line, text: link, target } of targets(paragraph)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const hash = target.indexOf("#");
        const filePart = decodeURI(hash < 0 ? target : target.slice(0, hash));
        const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
        const goal = filePart === "" ? path : resolve(dirname(path), filePart);
        const where = `${file}:${line}: ${link}`;
        if (relative(root, goal).startsWith("..")) broken.push(`${where}: points outside the repository`);
        else if (!existsSync(goal)) broken.push(`${where}: no file ${relative(root, goal)}`);
        else if (anchor !== undefined && goal.endsWith(".md") && !headingsOf(goal).has(anchor))
          broken.push(`${where}: no heading #${anchor} in ${relative(root, goal)}`);
      }
    }
  }
  return broken;
}

describe("links in every Markdown file of the repository", () => {
  it("slugs headings as GitHub does", () => {
    assert.equal(
      slug("Working asynchronously [async-push, async-steer, async-core, async-model, sheep-ext]"),
      "working-asynchronously-async-push-async-steer-async-core-async-model-sheep-ext",
    );
    assert.equal(slug("The /shepherd command [command-parse, command-run]"), "the-shepherd-command-command-parse-command-run");
    assert.equal(slug("Guarantees: what survives what"), "guarantees-what-survives-what");
    assert.equal(slug("Delegation [delegate (unit), delegate (e2e)]"), "delegation-delegate-unit-delegate-e2e");
  });

  it("names each broken link: a missing file, a missing heading, a link outside the repository", () => {
    const root = mkdtempSync(join(tmpdir(), "docs-links-"));
    try {
      writeFileSync(join(root, "README.md"), "# Top\n\n## Part\n\nSee [the part](#part) and [a guide](docs/guide.md#usage).\n");
      writeFileSync(join(root, "PLAN.md"), "[gone](docs/gone.md) and [up](../x.md)\n\n```\n[in code](nowhere.md)\n```\n`[span](nowhere.md)`\n");
      writeFileSync(
        join(root, "spec.md"),
        "# Spec\n\n[bad anchor](README.md#nothing) [ok](README.md#top) [web](https://example.com/x.md)\nand [a link that\nwraps](README.md#gone).\n",
      );
      mkdirSync(join(root, "agents"));
      writeFileSync(join(root, "agents", "scout.md"), "[back](../spec.md#spec) [lost](../spec.md#lost)\n");
      for (const skipped of ["node_modules", ".git"]) {
        mkdirSync(join(root, skipped));
        writeFileSync(join(root, skipped, "x.md"), "[not ours](nowhere.md)\n");
      }
      assert.deepEqual(brokenLinks(root, documents(root)), [
        "README.md:5: [a guide](docs/guide.md#usage): no file docs/guide.md",
        "spec.md:3: [bad anchor](README.md#nothing): no heading #nothing in README.md",
        "spec.md:4: [a link that wraps](README.md#gone): no heading #gone in README.md",
        "PLAN.md:1: [gone](docs/gone.md): no file docs/gone.md",
        "PLAN.md:1: [up](../x.md): points outside the repository",
        "agents/scout.md:1: [lost](../spec.md#lost): no heading #lost in spec.md",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("every relative link resolves, to its file and, in Markdown, to its heading", () => {
    const files = documents(repoRoot);
    assert.ok(files.includes("README.md") && files.includes("spec.md") && files.some((f) => f.startsWith("docs/")), "the documents are found");
    assert.ok(files.includes(join("agents", "scout.md")), "Markdown outside docs/ is found too");
    assert.ok(!files.some((f) => f.split("/").includes("node_modules")), "node_modules is not ours");
    const broken = brokenLinks(repoRoot, files);
    assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
  });

  it("spec.md stays easy to find in: no line over 200 characters, no part over 70 lines without a subhead", () => {
    const spec = readFileSync(join(repoRoot, "spec.md"), "utf8");
    const long = spec.split("\n").flatMap((line, i) => (line.length > 200 ? [`spec.md:${i + 1}: ${line.length} characters`] : []));
    assert.deepEqual(long, [], "wrap long lines; a table row that runs long becomes a list");
    const headings = proseLines(spec).filter(({ text }) => /^#{1,6}\s/.test(text));
    const parts = headings.map(({ line, text }, i) => ({ text, lines: (headings[i + 1]?.line ?? spec.split("\n").length + 1) - line }));
    const tooLong = parts.filter((part) => part.lines > 70).map((part) => `${part.text}: ${part.lines} lines`);
    assert.deepEqual(tooLong, [], "give the part a subhead (and a line in the contents)");
  });
});
