/** What /shepherd shows of an action's answer: notices for pi's transcript, from the tool's result. */

export interface Notice {
  level: "info" | "warning" | "error";
  text: string;
}

/** A tool result as the edge's execute returns it. */
export interface ActionResult {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown>;
}

export const info = (text: string): Notice[] => [{ level: "info", text }];

export const textOf = (r: ActionResult): string => r.content.map((c) => c.text).join("");

/** The tool's own words: most answers read the same to the model and to a person. */
export async function plainAnswer(run: () => Promise<ActionResult>): Promise<Notice[]> {
  return info(textOf(await run()));
}
