/**
 * What the `shepherd` tool adds to every request of the shepherd's model stays within its budget
 * (issue 36): a size, not a time, so a unit test guards it; `npm run bench -- --only tool-tokens` prints it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TOOL_GUIDELINES, TOOL_SNIPPET, toolDescription } from "../../../src/edge/description.ts";
import { shepherdParameters } from "../../../src/edge/schema.ts";
import { TOOL_TOKEN_BUDGET, toolCost } from "../../../src/edge/tool-cost.ts";

/** pi's own system prompt builder: not among the package's exports, so reached beside its entry. */
async function piSystemPrompt(): Promise<(o: Record<string, unknown>) => string> {
  const entry = import.meta.resolve("@earendil-works/pi-coding-agent");
  const mod = (await import(new URL("./core/system-prompt.js", entry).href)) as { buildSystemPrompt: (o: Record<string, unknown>) => string };
  return mod.buildSystemPrompt;
}

describe("the tool's cost per model request", () => {
  it(`is at most ${TOOL_TOKEN_BUDGET} tokens (characters ÷ 4)`, () => {
    const c = toolCost();
    assert.ok(
      c.tokens <= TOOL_TOKEN_BUDGET,
      `${c.tokens} tokens: description ${c.descriptionChars} + schema ${c.schemaChars} + system prompt ${c.promptChars} chars; say it once, or in the result that needs it`,
    );
  });

  it("counts the description and the schema as sent, and the system prompt's lines as pi writes them", async () => {
    const c = toolCost();
    assert.equal(c.descriptionChars, toolDescription().length);
    assert.equal(c.schemaChars, JSON.stringify(shepherdParameters).length);
    assert.equal(c.tokens, Math.ceil((c.descriptionChars + c.schemaChars + c.promptChars) / 4));
    const build = await piSystemPrompt();
    // Beside another tool with a snippet, as in every real session (alone, it would replace pi's "(none)").
    const base = { cwd: "/w", contextFiles: [], skills: [] };
    const without = build({ ...base, selectedTools: ["read"], toolSnippets: { read: "Read files" } });
    const withTool = build({
      ...base,
      selectedTools: ["read", "shepherd"],
      toolSnippets: { read: "Read files", shepherd: TOOL_SNIPPET },
      promptGuidelines: [...TOOL_GUIDELINES],
    });
    for (const line of [`- shepherd: ${TOOL_SNIPPET}`, ...TOOL_GUIDELINES.map((g) => `- ${g}`)]) assert.ok(withTool.includes(`${line}\n`), line);
    // The lines counted are what the tool adds to pi's prompt, newlines included.
    assert.equal(withTool.length - without.length, c.promptChars);
  });
});
