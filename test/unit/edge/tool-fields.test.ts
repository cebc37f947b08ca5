/**
 * The schema is flat, so every action is offered every field: parseToolCommand refuses a field the
 * action does not take (another action's, a typo) with [invalid_params], naming the field and
 * those the action takes, instead of running as if it were not there.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseShepherdCommand } from "../../../src/command/parse.ts";
import { ACTION_FIELDS, parseToolCommand } from "../../../src/edge/command.ts";
import { ACTIONS, parameterNames } from "../../../src/edge/schema.ts";

const refused = (raw: unknown, re: RegExp) =>
  assert.throws(
    () => parseToolCommand(raw),
    (e: Error) => e.message.startsWith("[invalid_params] ") && re.test(e.message),
  );

describe("fields an action does not take", () => {
  it("start with a field no action takes (machine) or a typo (promptid) is refused, naming it and the fields start takes", () => {
    refused({ action: "start", agent: "echo", machine: "box" }, /action "start" does not take "machine"; it takes "agent", "label", .*"host", .*"resume"\./);
    // host belongs to start and delegate only
    refused({ action: "prompt", agentId: "a", message: "m", host: "box" }, /action "prompt" does not take "host"/);
    refused({ action: "start", agent: "echo", promptid: "p_1" }, /action "start" does not take "promptid"/);
  });

  it("another action's field is refused too, and a case slip is pointed at the field it meant", () => {
    refused({ action: "status", agentId: "a", lines: 3 }, /action "status" does not take "lines"; it takes "agentId"\./);
    refused(
      { action: "wait", promptid: "p_1" },
      /action "wait" does not take "promptid" \(did you mean "promptId"\?\); it takes "promptId", "promptIds", "timeout"\./,
    );
    refused({ action: "doctor", agentId: "a" }, /action "doctor" does not take "agentId"; it takes no other field\./);
    refused({ action: "delegate", agent: "echo", task: "x", label: "l" }, /action "delegate" does not take "label"/);
  });

  it("a delegate task object with a field it does not take is refused", () => {
    refused(
      { action: "delegate", tasks: [{ agent: "echo", task: "x", model: "m" }] },
      /tasks\[0\] does not take "model"; it takes "agent", "task", "cwd", "host", "isolate", "sandbox", "budget"\./,
    );
    refused(
      {
        action: "delegate",
        chain: [
          { agent: "echo", task: "x" },
          { agent: "echo", task: "y", lable: "z" },
        ],
      },
      /chain\[1\] does not take "lable"/,
    );
  });

  it("what pi leaves of an omitted field (null) and fields the action takes still pass", () => {
    assert.deepEqual(parseToolCommand({ action: "start", agent: "echo", label: null, isolate: "true" }), { action: "start", agent: "echo", isolate: true });
    assert.deepEqual(parseToolCommand({ action: "prompt", agentId: "a", message: "m", notify: true, requestId: "r" }), {
      action: "prompt",
      target: "a",
      message: "m",
      notify: true,
      requestId: "r",
    });
    assert.deepEqual(parseToolCommand({ action: "start", resume: "fixer", label: "f2" }), { action: "start", resume: "fixer", label: "f2" });
  });

  it("every action has its list; every listed field is in the schema, and every schema field is taken by some action", () => {
    const schema = new Set(parameterNames());
    assert.deepEqual(Object.keys(ACTION_FIELDS).sort(), [...ACTIONS].sort());
    const taken = new Set<string>(["action"]);
    for (const [action, fields] of Object.entries(ACTION_FIELDS)) {
      for (const f of fields) {
        assert.ok(schema.has(f), `${action} takes "${f}", which the schema lacks`);
        taken.add(f);
      }
    }
    assert.deepEqual(
      [...schema].filter((f) => !taken.has(f)),
      [],
      "schema fields no action takes",
    );
  });

  it("/shepherd builds only commands with the fields their action takes", () => {
    for (const line of [
      "start echo --label a --isolate --scope both --model m --cwd . --placement pane --direction down",
      "resume a --label b",
      "read a --turns 2",
      "close a --remove-worktree --force",
      "land a --squash",
      "diff a --stat",
      "messages a --unread",
      "reply a m_1 yes",
      "herd",
      "prune",
    ]) {
      assert.doesNotThrow(() => parseShepherdCommand(line), line);
    }
  });
});
