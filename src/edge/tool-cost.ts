import { TOOL_GUIDELINES, TOOL_SNIPPET, toolDescription } from "./description.ts";
import { shepherdParameters } from "./schema.ts";

/**
 * What the `shepherd` tool adds to every request of the shepherd's model, as pi sends it: the
 * description and the JSON schema beside the tool's name (each provider wraps them in a few keys of
 * its own, not counted), and in the system prompt the snippet's line under the tools and one rule
 * line per guideline (pi's core/system-prompt.js).
 */
export interface ToolCost {
  descriptionChars: number;
  schemaChars: number;
  /** The snippet's and the guidelines' lines in the system prompt, with their "- " and newlines. */
  promptChars: number;
  chars: number;
  /** chars ÷ 4, rounded up: the usual rule of thumb for English and JSON in BPE tokenizers. */
  tokens: number;
}

/** The budget of issue 36: what every turn of every shepherd pays. */
export const TOOL_TOKEN_BUDGET = 1500;

export function toolCost(): ToolCost {
  const descriptionChars = toolDescription().length;
  const schemaChars = JSON.stringify(shepherdParameters).length;
  const lines = [`- shepherd: ${TOOL_SNIPPET}`, ...TOOL_GUIDELINES.map((g) => `- ${g}`)];
  const promptChars = lines.map((l) => l.length + 1).reduce((a, b) => a + b, 0);
  const chars = descriptionChars + schemaChars + promptChars;
  return { descriptionChars, schemaChars, promptChars, chars, tokens: Math.ceil(chars / 4) };
}
