/**
 * The action table drives the edges: an action added to it shows in the tool's schema and
 * description and in /shepherd's grammar, help and completion, with nothing else touched.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Type } from "@sinclair/typebox";
import { completeShepherdArgs, type CompletionSources } from "../../../src/command/complete.ts";
import { actionParams, findSubcommand, subcommandsOf } from "../../../src/command/parse.ts";
import { fieldsOf } from "../../../src/actions/fields.ts";
import { type CommandForm, defineAction } from "../../../src/actions/spec.ts";
import { ACTION_TABLE, COMMAND_ORDER } from "../../../src/actions/table.ts";
import { SHEEP_ROUTES } from "../../../src/panel/routes.ts";
import { ACTION_FIELDS } from "../../../src/edge/command.ts";
import { toolDescription } from "../../../src/edge/description.ts";
import { shepherdParameters, toolParameters } from "../../../src/edge/schema.ts";
import { repoRoot } from "../../support/rpc-shepherd.ts";

/** A test-only action: one shared field, one of its own, one /shepherd form. */
const bleat = defineAction({
  name: "bleat",
  described: "bleat (a fake action of this test)",
  fields: { ...fieldsOf("agentId"), volume: Type.Number({ description: "bleat: how loud." }) },
  commands: [
    {
      name: "bleat",
      usage: "bleat <id|label> [--volume N] [--twice]",
      summary: "a fake action of this test",
      flags: { volume: "volume" },
      switches: { twice: "twice" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId], flags) => ({ ...flags, action: "bleat", agentId }),
      first: "sheep",
    },
  ],
});
const table = [...ACTION_TABLE, bleat];

const src: CompletionSources = {
  agents: async () => [],
  sheep: () => [{ agentId: "a_0123456789", label: "rex", agent: "scout", state: "idle" }],
  resumable: async () => [],
};

describe("a fake action added to the table", () => {
  it("is in the tool's schema: its name in the action enum, its own field beside the shared ones", () => {
    const schema = toolParameters(table) as unknown as { properties: Record<string, { enum?: string[]; description?: string }> };
    assert.deepEqual(schema.properties.action?.enum, [...ACTION_TABLE.map((a) => a.name), "bleat"]);
    assert.equal(schema.properties.volume?.description, "bleat: how loud.");
    assert.ok("agentId" in schema.properties);
    // The real table's schema does not know it.
    assert.ok(!("volume" in shepherdParameters.properties));
    assert.ok(!(shepherdParameters.properties.action as unknown as { enum: string[] }).enum.includes("bleat"));
  });

  it("is in the tool's description", () => {
    assert.match(toolDescription(table), /, bleat \(a fake action of this test\)\./);
    assert.doesNotMatch(toolDescription(), /bleat/);
  });

  it("is in /shepherd's grammar: its words and flags become its tool parameters, its usage on a wrong line", () => {
    const subs = subcommandsOf(table);
    const info = findSubcommand("bleat", subs);
    assert.ok(info, "the subcommand is found");
    assert.deepEqual(actionParams(info, ["rex", "--volume", "3", "--twice"]), { volume: "3", twice: true, action: "bleat", agentId: "rex" });
    assert.throws(() => actionParams(info, []), /\[invalid_params\] "bleat" needs a sheep's id or label\. Usage: \/shepherd bleat <id\|label>/);
    assert.throws(() => actionParams(info, ["rex", "--loud"]), /unknown option "--loud" for "bleat"/);
    assert.equal(findSubcommand("bleat"), undefined, "the real grammar does not know it");
  });

  it("is in /shepherd's completion: the subcommand, the sheep it names, its flags", async () => {
    const subs = subcommandsOf(table);
    assert.deepEqual(await completeShepherdArgs("ble", src, subs), [{ value: "bleat ", label: "bleat", description: "a fake action of this test" }]);
    assert.deepEqual(
      (await completeShepherdArgs("bleat ", src, subs))?.map((i) => i.label),
      ["rex"],
    );
    assert.deepEqual(
      (await completeShepherdArgs("bleat rex --", src, subs))?.map((i) => i.label),
      ["--volume", "--twice"],
    );
    assert.equal(await completeShepherdArgs("ble", src), null, "the real grammar offers nothing for it");
  });

  it("may not describe a shared field anew: one description per field", () => {
    const twice = defineAction({ name: "twice", described: "twice", fields: { agentId: Type.String({ description: "another" }) }, commands: [] });
    assert.throws(() => toolParameters([...ACTION_TABLE, twice]), /describes the shared field "agentId" anew/);
  });
});

describe("the table and what is checked against it", () => {
  const names = ACTION_TABLE.map((a) => a.name);
  const spec = readFileSync(join(repoRoot, "spec.md"), "utf8");

  it("spec.md names the schema's actions, exactly the table's, and has an entry for each one's fields", () => {
    const said = /`action` is a string enum listing only\s+actions that work: ([^.]*)\./.exec(spec);
    assert.ok(said, "spec.md says which actions the enum lists");
    const listed = [...said[1]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
    assert.deepEqual([...listed].sort(), [...names].sort());
    const fields = spec.slice(spec.indexOf("### Fields per action"));
    for (const name of names) assert.match(fields, new RegExp(`^- \`${name}\`: `, "m"), `spec.md's Fields per action has an entry for ${name}`);
  });

  it("docs/shepherd-command.md has a line for each action's /shepherd forms", () => {
    const doc = readFileSync(join(repoRoot, "docs", "shepherd-command.md"), "utf8");
    for (const form of ACTION_TABLE.flatMap((a): readonly CommandForm[] => a.commands))
      assert.match(doc, new RegExp(`^/shepherd ${form.name}\\b`, "m"), form.name);
  });

  it("the help's order names each action that has a /shepherd form, once; a form not named comes last", () => {
    for (const a of ACTION_TABLE.filter((x) => x.commands.length > 0)) {
      assert.equal(COMMAND_ORDER.filter((e) => e === a).length, 1, `${a.name} has its place in COMMAND_ORDER`);
    }
    assert.equal(subcommandsOf(table).at(-1)?.name, "bleat");
  });

  it("each change the panel posts to a sheep is an action of the table that takes a sheep", () => {
    for (const segment of Object.keys(SHEEP_ROUTES.POST ?? {})) {
      assert.ok((names as string[]).includes(segment), `POST …/${segment} runs the action ${segment}`);
      assert.ok(ACTION_FIELDS[segment as (typeof names)[number]].includes("agentId"), `${segment} takes the sheep's agentId`);
    }
  });
});
