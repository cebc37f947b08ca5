/**
 * The channels of the `notify` setting, made once per shepherd. The terminal's and the browser's
 * go through what the session hands over (pi's own notification; the panel's event stream); while
 * there is none, their notices wait in the outbox and are tried again.
 */
import type { Notice } from "../notice.ts";
import type { Channel } from "../notifier.ts";
import { channelId, type ChannelSettings, wants } from "../settings.ts";
import { sendDesktop } from "./desktop.ts";
import { sendNtfy, sendWebhook } from "./http.ts";

/** Where the session shows a notice: set when it has a UI (terminal) or a running panel (browser). */
export interface NoticeSinks {
  /** pi's own notification (ctx.ui.notify); the text is printable already. */
  terminal?: (notice: Notice) => void;
  /** The panel's event stream; false when the panel does not run. */
  browser?: (notice: Notice) => boolean;
  /** The panel's page without its token, while the panel runs: every notice names it. */
  link?: () => string | undefined;
}

export function makeChannels(settings: readonly ChannelSettings[], sinks: NoticeSinks, env: NodeJS.ProcessEnv = process.env): Channel[] {
  return settings.map((c, i) => ({
    id: channelId(c, i),
    type: c.type,
    wants: (kind) => wants(c, kind),
    send: (n: Notice) => sendVia(c, n, sinks, env),
  }));
}

async function sendVia(c: ChannelSettings, n: Notice, sinks: NoticeSinks, env: NodeJS.ProcessEnv): Promise<void> {
  switch (c.type) {
    case "webhook":
      return sendWebhook(c.url!, c.format ?? "json", n);
    case "ntfy":
      return sendNtfy(c.url!, n);
    case "desktop":
      return sendDesktop(n, env);
    case "terminal":
      if (!sinks.terminal) throw new Error("this pi has no screen to notify on");
      sinks.terminal(n);
      return;
    case "browser":
      if (!sinks.browser?.(n)) throw new Error("the panel does not run");
      return;
  }
}
