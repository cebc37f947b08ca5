/**
 * The HTTP channels: a webhook (a JSON POST; "slack": a Slack-compatible `{text}` body) and an
 * ntfy topic (a POST of the text, its title and priority in headers). Each POST has a deadline, and
 * carries the notice alone: never the panel's token (a notice's link is the page without it) nor
 * any other secret of the shepherd.
 */
import type { Notice } from "../notice.ts";
import { SEND_DEADLINE_MS } from "../notifier.ts";

/** A webhook's JSON body, the names fixed by issue 35. */
export function webhookBody(n: Notice, format: "json" | "slack"): string {
  if (format === "slack") return JSON.stringify({ text: `${n.title}\n${n.text}` });
  return JSON.stringify({
    event: n.event,
    id: n.id,
    agentId: n.agentId ?? null,
    label: n.label ?? null,
    host: n.host,
    text: `${n.title}\n${n.text}`,
    at: n.at,
    link: n.link ?? null,
  });
}

/** ntfy's priority: what waits on the person is high, the rest default. */
function ntfyPriority(n: Notice): string {
  return n.event === "question" || n.event === "blocked" || n.event === "budget" ? "high" : "default";
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: "POST", body, headers, redirect: "error", signal: AbortSignal.timeout(SEND_DEADLINE_MS) });
  // The answer's body is not ours to read: only whether it took the notice.
  await res.body?.cancel().catch(() => undefined);
  if (!res.ok) throw new Error(`${new URL(url).host} answered HTTP ${res.status}`);
}

export function sendWebhook(url: string, format: "json" | "slack", n: Notice): Promise<void> {
  return post(url, webhookBody(n, format), { "content-type": "application/json" });
}

/** A header's value: printable ASCII only (a title may hold any character a label or host has). */
function headerText(s: string): string {
  return s.replace(/[^\u0020-\u007e]/g, "?").slice(0, 200);
}

export function sendNtfy(url: string, n: Notice): Promise<void> {
  return post(url, n.text, {
    "content-type": "text/plain; charset=utf-8",
    title: headerText(n.title),
    priority: ntfyPriority(n),
    ...(n.link ? { click: n.link } : {}),
  });
}
