/** What every action answers: a text for the model (capped) and the details in full. */
export interface ToolResult {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown> & { action: string };
}

const MAX_TEXT = 50_000;

/** What the model reads inline is capped; the full text always stays in details. */
export function boundedText(text: string): string {
  return text.length > MAX_TEXT
    ? `${text.slice(0, MAX_TEXT)}\n[... ${text.length - MAX_TEXT} more characters; the full text is in the details and the sheep's session file]`
    : text;
}

export function result(action: string, text: string, details: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: boundedText(text) }], details: { action, ...details } };
}
