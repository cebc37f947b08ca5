/**
 * Argument leniency in the two places it runs: prepareArguments (before pi's schema check) and
 * coerce (in dispatch, after pi has already wrapped a string given for an array).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { coerce, prepareArguments } from "../../../src/edge/params.ts";

const task = { agent: "echo", task: "x" };

describe("prepareArguments", () => {
  it("turns arrays sent as JSON text into arrays before pi wraps them", () => {
    assert.deepEqual(prepareArguments({ action: "wait", promptIds: '["p_1","p_2"]' }), { action: "wait", promptIds: ["p_1", "p_2"] });
    assert.deepEqual(prepareArguments({ action: "wait", promptIds: "p_1, p_2" }), { action: "wait", promptIds: ["p_1", "p_2"] });
    assert.deepEqual(prepareArguments({ action: "delegate", tasks: JSON.stringify([task]) }), { action: "delegate", tasks: [task] });
    assert.deepEqual(prepareArguments({ action: "delegate", chain: JSON.stringify([task, task]) }), { action: "delegate", chain: [task, task] });
  });

  it("leaves what it cannot read for pi's check, and never throws", () => {
    assert.equal(prepareArguments("not json"), "not json");
    assert.equal(prepareArguments(null), null);
    assert.deepEqual(prepareArguments({ action: "delegate", tasks: "[{" }), { action: "delegate", tasks: "[{" });
    assert.deepEqual(prepareArguments({ action: "wait", promptIds: ["p_1"] }), { action: "wait", promptIds: ["p_1"] });
    assert.deepEqual(prepareArguments('{"action":"herd"}'), { action: "herd" });
  });
});

describe("coerce", () => {
  it("unwraps a one-element array holding an array as JSON text", () => {
    assert.deepEqual(coerce({ action: "wait", promptIds: ['["p_1","p_2"]'] }).promptIds, ["p_1", "p_2"]);
    assert.deepEqual(coerce({ action: "delegate", tasks: [JSON.stringify([task])] }).tasks, [task]);
    assert.deepEqual(coerce({ action: "delegate", chain: [JSON.stringify([task])] }).chain, [task]);
  });

  it("splits a comma list of promptIds inside a one-element array", () => {
    assert.deepEqual(coerce({ action: "wait", promptIds: ["p_1, p_2"] }).promptIds, ["p_1", "p_2"]);
    assert.deepEqual(coerce({ action: "wait", promptIds: ["p_1"] }).promptIds, ["p_1"]);
  });

  it("keeps real arrays as they are", () => {
    assert.deepEqual(coerce({ action: "wait", promptIds: ["p_1", "p_2"] }).promptIds, ["p_1", "p_2"]);
    assert.deepEqual(coerce({ action: "delegate", tasks: [task] }).tasks, [task]);
    assert.deepEqual(coerce({ action: "delegate", tasks: ["[{"] }).tasks, ["[{"], "unreadable text is left for the task check to report");
  });

  it("converts numbers and booleans sent as text, and still refuses a non-object", () => {
    assert.deepEqual(coerce({ action: "wait", timeout: "30", keepOpen: "true", all: "false", lines: null }), {
      action: "wait",
      timeout: 30,
      keepOpen: true,
      all: false,
    });
    assert.throws(() => coerce("[1]"), { message: /^\[invalid_params\] / });
  });
});
