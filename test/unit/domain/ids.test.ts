/** The ids the edges parse once: each parse keeps the refusal the core gave before it moved. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isWellFormedId, newId, parseAgentId, parseMessageId, parsePromptId } from "../../../src/domain/ids.ts";

const bad = [undefined, null, 42, {}, ["a_0000000000"], "", "   "];

describe("ids: parsed once at the edge", () => {
  it("parseAgentId passes any non-empty string through, for the core to say whether such a sheep exists", () => {
    for (const v of ["a_0000000000", "p_0000000000", "worker-1"]) assert.equal(parseAgentId(v), v);
    assert.equal(parseAgentId(newId("agent")).length, 12);
  });

  it("parseAgentId refuses what is not a non-empty string with [invalid_params]", () => {
    for (const v of bad) {
      assert.throws(() => parseAgentId(v), /^ShepherdError: \[invalid_params\] agentId must be a non-empty string \(an id returned by start\)\.$/);
    }
  });

  it("parsePromptId names the field it parsed", () => {
    assert.equal(parsePromptId("p_0000000000"), "p_0000000000");
    for (const v of bad) assert.throws(() => parsePromptId(v), /^ShepherdError: \[invalid_params\] "promptId" must be a non-empty string\.$/);
    assert.throws(() => parsePromptId("", "target"), /^ShepherdError: \[invalid_params\] "target" must be a non-empty string\.$/);
  });

  it("parseMessageId refuses as the action's own field check does", () => {
    assert.equal(parseMessageId("m_0000000000", "reply"), "m_0000000000");
    for (const v of bad) {
      assert.throws(() => parseMessageId(v, "reply"), /^ShepherdError: \[invalid_params\] action "reply" needs "messageId" \(a non-empty string\)\.$/);
    }
  });

  it("a well-formed id is one newId could make, of that kind only", () => {
    const id = newId("agent");
    assert.ok(isWellFormedId(id, "agent"));
    assert.equal(isWellFormedId(id, "prompt"), false);
    assert.equal(isWellFormedId(`${id}x`, "agent"), false);
    assert.equal(isWellFormedId("a_ABCDEFGHIJ", "agent"), false);
  });
});
