import type { Usage } from "../ports/types.ts";

export interface FinalAssistant {
  text: string;
  stopReason?: string;
  errorMessage?: string;
  usage?: unknown;
  model?: string;
}

/** The exact final text of an assistant message: its text parts, joined, nothing trimmed. */
export function finalAssistant(message: unknown): FinalAssistant | undefined {
  if (!message || typeof message !== "object") return undefined;
  const m = message as { content?: unknown; stopReason?: string; errorMessage?: string; usage?: unknown; provider?: string; model?: string };
  const parts = Array.isArray(m.content) ? m.content : typeof m.content === "string" ? [{ type: "text", text: m.content }] : [];
  const text = parts
    .filter((p): p is { type: "text"; text: string } => p?.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("");
  return {
    text,
    ...(m.stopReason ? { stopReason: m.stopReason } : {}),
    ...(m.errorMessage ? { errorMessage: m.errorMessage } : {}),
    ...(m.usage ? { usage: m.usage } : {}),
    ...(m.model ? { model: m.provider ? `${m.provider}/${m.model}` : m.model } : {}),
  };
}

export function resultStatus(stopReason: string | undefined): "completed" | "failed" | "cancelled" {
  if (stopReason === "error") return "failed";
  if (stopReason === "aborted") return "cancelled";
  if (stopReason === undefined) return "failed";
  return "completed";
}

export function usageOf(u: unknown): Usage {
  const x = (u ?? {}) as { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; totalTokens?: number; cost?: { total?: number } };
  return {
    ...(x.input !== undefined ? { input: x.input } : {}),
    ...(x.output !== undefined ? { output: x.output } : {}),
    ...(x.cacheRead !== undefined ? { cacheRead: x.cacheRead } : {}),
    ...(x.cacheWrite !== undefined ? { cacheWrite: x.cacheWrite } : {}),
    ...(x.totalTokens !== undefined ? { totalTokens: x.totalTokens } : {}),
    ...(x.cost?.total !== undefined ? { cost: x.cost.total } : {}),
  };
}
