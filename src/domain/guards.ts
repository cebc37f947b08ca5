/** A plain JSON object: what every reader of untrusted JSON (state files, herdr answers, tool input) checks first. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
