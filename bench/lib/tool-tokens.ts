/** The tokens the `shepherd` tool adds to every request of the shepherd's model: counted from its texts, no sheep run. */
import { TOOL_TOKEN_BUDGET, type ToolCost, toolCost } from "../../src/edge/tool-cost.ts";

/** Before issue 36's cut (main 75dbdda): the figure the cut is judged against. */
export const TOOL_TOKENS_BEFORE = 2475;

export const TOOL_TOKENS_DEFINITION =
  "characters ÷ 4 (rounded up) over the texts pi sends for the tool on every request: its description, its JSON schema " +
  "exactly as JSON.stringify writes it (the provider's few wrapping keys and the tool's name not counted), and in the " +
  'system prompt the snippet\'s line ("- shepherd: …") and one line ("- …") per guideline, newlines included ' +
  "(src/edge/tool-cost.ts, pi's core/system-prompt.js); no tokenizer: ÷ 4 is the usual rule of thumb for BPE " +
  `tokenizers on English and JSON. Before issue 36's cut: ${TOOL_TOKENS_BEFORE}`;

export function measureToolTokens(say: (s: string) => void): ToolCost {
  const c = toolCost();
  say(
    `tool tokens: ${c.tokens} (before ${TOOL_TOKENS_BEFORE}, target <= ${TOOL_TOKEN_BUDGET}): ${c.chars} characters = ` +
      `description ${c.descriptionChars} + schema ${c.schemaChars} + system prompt ${c.promptChars}`,
  );
  return c;
}
