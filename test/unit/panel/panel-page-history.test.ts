/**
 * The page's history and work parts as pure functions: a branch's state in the words a person
 * decides on, and the list's query and today's line as the herd's page builds them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { PAGE_DIR } from "../../../src/panel/page.ts";

type Fn<R> = (...a: unknown[]) => R;
const load = <T>(name: string) => import(pathToFileURL(join(PAGE_DIR, name)).href) as Promise<T>;

describe("the page's history and work", () => {
  it("a branch's state in words: conflicts first, landed or no work yet, ahead and behind, uncommitted; unknown and gone said so", async () => {
    const { branchText } = await load<{ branchText: Fn<string> }>("work.js");
    const base = {
      known: true,
      exists: true,
      branch: "shepherd/b-1",
      into: "main",
      ahead: 0,
      behind: 0,
      conflicts: [],
      uncommitted: 0,
      worked: false,
      landed: false,
    };
    assert.equal(branchText(base), "no work yet · 0 ahead · 0 behind main");
    assert.equal(branchText({ ...base, worked: true, ahead: 2, behind: 1, uncommitted: 3 }), "2 ahead · 1 behind main · 3 uncommitted");
    assert.equal(branchText({ ...base, worked: true, landed: true, behind: 4 }), "landed · 0 ahead · 4 behind main");
    assert.equal(
      branchText({ ...base, worked: true, ahead: 1, conflicts: ["a", "b", "c", "d", "e", "f", "g"] }),
      "conflicts in a, b, c, d, e and 2 more · 1 ahead · 0 behind main",
    );
    assert.equal(branchText({ known: false }), "Its machine does not tell where the branch stands; land or sync says.");
    assert.equal(branchText(undefined), "Its machine does not tell where the branch stands; land or sync says.");
    assert.equal(branchText({ ...base, exists: false }), "Its worktree is gone; branch shepherd/b-1.");
    assert.equal(branchText({ ...base, ahead: "<b>9</b>" }), "no work yet · 0 ahead · 0 behind main", "a count that is no number is 0");
  });

  it("today's line: tokens, cost and the closed sheep kept; nothing without totals", async () => {
    const { todayText } = await load<{ todayText: Fn<string> }>("history.js");
    assert.equal(todayText(undefined), "");
    assert.equal(todayText({ closed: 0, today: { input: 1500, output: 20, cost: 0.5 } }), " · today 1.5k in · 20 out · $0.50");
    assert.match(todayText({ closed: 3, today: { input: 0, output: 0, cost: 0 } }), / · 3 closed$/);
  });
});
