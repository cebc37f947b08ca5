/**
 * The panel's pi glue: `/shepherd panel` on, off and url; the port closed when pi quits or
 * reloads; a reload brings it back (same port, token and sessions, held on globalThis as the
 * owner token is) when it was on, and the user's `panel.autostart` turns it on when the session
 * begins. The server and its rules are src/panel.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { PanelMode } from "../src/command/parse.ts";
import type { PanelAuth } from "../src/panel/auth.ts";
import type { PanelServer } from "../src/panel/server.ts";
import type { Settings } from "../src/settings.ts";
import type { EntryDeps } from "../src/edge/entry.ts";
import type { panelReplyText as ReplyText } from "../src/command/person-text.ts";
import { parts } from "./lazy-parts.ts";

/** What outlives a /reload of this pi: whether the panel was on, where, and with which token and sessions. */
interface Held {
  on: boolean;
  port?: number;
  /** The settings' `panel.port` it was bound for: another one there is a change that applies on reload. */
  setting?: number;
  auth?: PanelAuth;
}

/** The panel goes off: nothing of it is held for the next reload. */
function letGo(h: Held): void {
  h.on = false;
  delete h.auth;
  delete h.port;
  delete h.setting;
}

const HELD = Symbol.for("pi-shepherd.panel");

function held(): Held {
  const g = globalThis as { [HELD]?: Held };
  g[HELD] ??= { on: false };
  return g[HELD];
}

export interface PanelAccess {
  /** The tool's entry for this context. */
  entry(ctx: ExtensionContext): EntryDeps;
  settings(ctx: ExtensionContext): Promise<Settings>;
  /** Says something in pi's transcript: a reply given in the panel is mentioned there. */
  tell?(ctx: ExtensionContext, text: string): void;
}

export class PanelGlue {
  private server: PanelServer | undefined;
  private starting: Promise<PanelServer> | undefined;

  constructor(private readonly access: PanelAccess) {}

  /** `/shepherd panel [on|off|url]`: its answer. */
  async command(ctx: ExtensionContext, mode: PanelMode | undefined): Promise<string> {
    const { panelOffText, panelOnText, panelUrlText } = await parts();
    const want = mode ?? (this.server ? "url" : "on");
    if (want === "url") return panelUrlText(this.server?.url);
    if (want === "off") {
      const port = this.server?.port;
      await this.stop();
      letGo(held());
      return panelOffText(port);
    }
    const already = this.server !== undefined;
    const server = await this.start(ctx, false);
    return panelOnText(server.url, server.port, already);
  }

  /** A notice of the `notify` setting's browser channel to the page's event stream; false while the panel is off. */
  notice(n: { id: string; title: string; text: string; agentId?: string; link?: string }): boolean {
    if (!this.server) return false;
    this.server.hub.send("notify", { id: n.id, title: n.title, text: n.text, ...(n.agentId ? { agentId: n.agentId } : {}) });
    return true;
  }

  /** The panel's page without its token (the token is the fragment of `url`): what a notice may name. */
  link(): string | undefined {
    return this.server ? `http://127.0.0.1:${this.server.port}/` : undefined;
  }

  /** When the session begins: back on after a reload that closed it, or on by the user's setting. */
  async resume(ctx: ExtensionContext): Promise<string | undefined> {
    if (held().on) return (await this.start(ctx, true)).url;
    if ((await this.access.settings(ctx)).panel.autostart) return (await this.start(ctx, false)).url;
    return undefined;
  }

  /** pi quits or reloads: the port closes now; a reload finds it on again (resume). */
  async shutdown(reason: string): Promise<void> {
    await this.stop();
    if (reason === "quit") held().on = false;
  }

  private start(ctx: ExtensionContext, again: boolean): Promise<PanelServer> {
    if (this.server) return Promise.resolve(this.server);
    this.starting ??= (async () => {
      const { PanelAuth, PanelServer, panelLostText, panelReplyText } = await parts();
      const h = held();
      const setting = (await this.access.settings(ctx)).panel.port;
      // Back on the port it had, with its token and sessions, unless the settings name another
      // port now: then there, with a new token (a page of the old port's origin cannot follow).
      const same = again && h.port !== undefined && h.auth !== undefined && h.setting === setting;
      const port = same ? h.port! : setting;
      const server = new PanelServer({
        entry: panelEntry(this.access.entry(ctx), (text) => this.access.tell?.(ctx, text), panelReplyText),
        port,
        auth: same ? h.auth! : new PanelAuth(),
      });
      try {
        await server.start();
      } catch (e) {
        if (!again) throw e;
        // Whatever holds the port now may be given an open page's cookie and key at its next
        // request: that session, and the token, must open nothing when a later reload gets the port back.
        letGo(h);
        throw new Error(panelLostText(port, e));
      }
      this.server = server;
      h.on = true;
      h.port = server.port;
      h.setting = setting;
      h.auth = server.auth;
      return server;
    })().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const server = this.server;
    this.server = undefined;
    await server?.stop();
  }
}

/**
 * The tool's entry as the panel uses it: a person at a page, with no dialog of pi's to confirm a
 * project agent in, so trust answers as it does in a pi without UI.
 */
function panelEntry(entry: EntryDeps, tell: (text: string) => void, replyText: typeof ReplyText): EntryDeps {
  return {
    ...entry,
    // A reply given in the page is said in the transcript too, where the person at pi reads.
    done: (cmd, r) => {
      if (cmd.action !== "reply") return;
      const replied = r.details.replied as { agentId: string; messageId: string };
      tell(replyText(replied, typeof r.details.label === "string" ? r.details.label : undefined, cmd.text));
    },
    context: async () => {
      const c = await entry.context();
      const { confirm: _confirm, ...trust } = c.trust;
      return { ...c, trust: { ...trust, hasUI: false }, byPerson: true };
    },
  };
}
