/**
 * The panel's pi glue: `/shepherd panel` on, off and url; the port closed when pi quits or
 * reloads; a reload brings it back (same port, token and sessions, held on globalThis as the
 * owner token is) when it was on, and the user's `panel.autostart` turns it on when the session
 * begins. On a fixed port (the user's stable one, or `panel.port`) the token and sessions are kept
 * in the panel's private file too (src/panel/auth-file.ts), so a pi restarted later opens the same
 * URL and the open pages go on. The server and its rules are src/panel.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { PanelMode } from "../src/command/parse.ts";
import type { PanelAuth } from "../src/panel/auth.ts";
import type { AuthFile } from "../src/panel/auth-file.ts";
import type { ShepherdRegistry } from "../src/panel/registry.ts";

/** How often a panel not on the user's stable port tries to take it over. */
const STABLE_RETRY_MS = 5000;
import type { PanelServer } from "../src/panel/server.ts";
import type { Settings } from "../src/settings.ts";
import type { EntryDeps } from "../src/edge/entry.ts";
import type { panelReplyText as ReplyText } from "../src/command/person-text.ts";
import { parts } from "./lazy-parts.ts";

/** What outlives a /reload of this pi: whether the panel was on, where, and with which token and sessions. */
interface Held {
  on: boolean;
  port?: number;
  /** The settings' `panel.port` it was bound for (undefined: the stable port): another one there is a change that applies on reload. */
  setting?: number | "stable";
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
  /** The file the running panel's auth is kept in, when it is on its fixed port. */
  private authFile: AuthFile | undefined;
  /** Said once with the next URL: the stable port was taken, so this panel is elsewhere. */
  private note: string | undefined;
  private registry: ShepherdRegistry | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private moving: Promise<void> | undefined;
  private ctx: ExtensionContext | undefined;
  private readonly startedAt = new Date().toISOString();

  constructor(private readonly access: PanelAccess) {}

  /** `/shepherd panel [on|off|url]`: its answer. */
  async command(ctx: ExtensionContext, mode: PanelMode | undefined): Promise<string> {
    const { panelOffText, panelOnText, panelUrlText } = await parts();
    const want = mode ?? (this.server ? "url" : "on");
    if (want === "url") return panelUrlText(this.server?.url);
    if (want === "off") {
      const port = this.server?.port;
      const file = this.authFile;
      await this.stop();
      // Off means its URL opens nothing any more, after a restart too.
      file?.forget();
      letGo(held());
      return panelOffText(port);
    }
    const already = this.server !== undefined;
    const server = await this.start(ctx, false);
    return this.withNote(panelOnText(server.url, server.port, already));
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
    if (held().on) return this.withNote((await this.start(ctx, true)).url);
    if ((await this.access.settings(ctx)).panel.autostart) return this.withNote((await this.start(ctx, false)).url);
    return undefined;
  }

  private withNote(text: string): string {
    const note = this.note;
    this.note = undefined;
    return note ? `${text}\n${note}` : text;
  }

  /** pi quits or reloads: the port closes now; a reload finds it on again (resume). */
  async shutdown(reason: string): Promise<void> {
    await this.stop();
    if (reason === "quit") held().on = false;
  }

  private start(ctx: ExtensionContext, again: boolean): Promise<PanelServer> {
    if (this.server) return Promise.resolve(this.server);
    this.ctx = ctx;
    this.starting ??= (async () => {
      const { AuthFile, PanelAuth, ShepherdRegistry, agentDirOf, panelLostText, panelPortTakenText, stablePanelPort, wantedPanelPort } = await parts();
      const h = held();
      const agentDir = agentDirOf(process.env);
      const registry = ShepherdRegistry.of(agentDir);
      const configured = (await this.access.settings(ctx)).panel.port;
      const setting = configured ?? "stable";
      const wanted = wantedPanelPort(configured);
      // Back on the port it had, with its token and sessions, unless the settings name another
      // port now: then there, with the auth its file keeps for that port, or a new token (a page
      // of the old port's origin cannot follow).
      const same = again && h.port !== undefined && h.auth !== undefined && h.setting === setting;
      const port = same ? h.port! : wanted;
      // Only a fixed port keeps its auth in the file: a free port is another origin at every start.
      const file = port !== 0 && port === wanted ? AuthFile.of(agentDir) : undefined;
      const auth = same ? h.auth! : (file?.load(port).auth ?? new PanelAuth());
      const src = { registry, selfPid: process.pid, stablePort: stablePanelPort() };
      const make = async (p: number, a: PanelAuth) => {
        const { PanelServer, panelReplyText } = await parts();
        const entry = panelEntry(this.access.entry(ctx), (text) => this.access.tell?.(ctx, text), panelReplyText);
        return new PanelServer({ entry, port: p, auth: a, shepherds: src });
      };
      let server = await make(port, auth);
      let kept = file;
      /** Another of this user's shepherds holds the stable port: this one takes it over when that one quits. */
      let heldBySibling = false;
      try {
        await server.start();
      } catch (e) {
        const taken = (e as { cause?: { code?: unknown } }).cause?.code === "EADDRINUSE";
        // Another of this user's shepherds holds it: its panel keeps the file and lists this one.
        const sibling = taken ? registry.list().find((x) => x.port === port && x.pid !== process.pid) : undefined;
        // Anything else may be given an open page's cookie and key (or the URL's token) at its next
        // request: they must open nothing when this port is ours again.
        if (!sibling) file?.forget();
        heldBySibling = sibling !== undefined;
        // A reload that finds its own port taken stays off (panelLostText); a start takes a free one.
        if (!(taken && configured === undefined && !same)) {
          if (!again) throw e;
          letGo(h);
          throw new Error(panelLostText(port, e));
        }
        // The stable port is the default, not the person's word: a free one, said so.
        server = await make(0, new PanelAuth());
        kept = undefined;
        await server.start();
        this.note = panelPortTakenText(port, server.port, sibling?.pid);
      }
      this.adopt(server, kept, registry, ctx);
      h.on = true;
      h.port = server.port;
      h.setting = setting;
      h.auth = server.auth;
      // Not on the stable port because a sibling holds it: take it over when that one quits, so the
      // bookmark keeps working. A port some other program holds is not watched: what it was given
      // is not to be followed onto, and a port it lets go of is no sign of this user's.
      // After a reload on the free port it had, the sibling is looked for again.
      if (!heldBySibling && configured === undefined && server.port !== wanted)
        heldBySibling = registry.list().some((x) => x.port === wanted && x.pid !== process.pid);
      if (heldBySibling) this.watchStable(wanted, agentDir, make);
      return server;
    })().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** The running panel, registered for its siblings, its auth kept in the file when it has one. */
  private adopt(server: PanelServer, file: AuthFile | undefined, registry: ShepherdRegistry, ctx: ExtensionContext): void {
    file?.keep(server.auth, server.port);
    const register = () => registry.register({ pid: process.pid, port: server.port, token: server.auth.token, cwd: ctx.cwd, startedAt: this.startedAt });
    const fileChange = server.auth.onChange;
    // A new token (after its idle time) is written to the entry too, or siblings would knock with the old one.
    server.auth.onChange = (now) => {
      fileChange?.(now);
      if (now) register();
    };
    register();
    this.registry = registry;
    this.authFile = file;
    this.server = server;
  }

  /** Tries the stable port every STABLE_RETRY_MS while this panel is elsewhere; moves there when it binds. */
  private watchStable(stable: number, agentDir: string, make: (p: number, a: PanelAuth) => Promise<PanelServer>): void {
    clearInterval(this.stableTimer);
    this.stableTimer = setInterval(() => {
      if (this.moving || !this.server || this.starting) return;
      this.moving = (async () => {
        const { AuthFile } = await parts();
        const file = AuthFile.of(agentDir);
        const next = await make(stable, file.load(stable).auth);
        try {
          await next.start();
        } catch {
          return; // still held
        }
        clearInterval(this.stableTimer);
        const old = this.server;
        const registry = this.registry!;
        this.server = undefined;
        await old?.stop();
        this.adopt(next, file, registry, this.ctx!);
        const h = held();
        h.port = next.port;
        h.auth = next.auth;
      })()
        .catch(() => undefined)
        .finally(() => {
          this.moving = undefined;
        });
    }, STABLE_RETRY_MS);
    this.stableTimer.unref();
  }

  private async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    clearInterval(this.stableTimer);
    await this.moving;
    const server = this.server;
    this.server = undefined;
    await server?.stop();
    this.registry?.unregister(process.pid);
    // Its last uses written: a restart finds the sessions as this pi leaves them.
    this.authFile?.release();
    this.authFile = undefined;
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
