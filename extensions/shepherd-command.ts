/**
 * The /shepherd slash command: pi glue only. Parsing, completions and what each subcommand
 * does live in src/command; every subcommand runs the tool's own dispatch on the same app.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { commandDescription, type PanelMode } from "../src/command/parse.ts";
import type { Notice, Watch } from "../src/command/run.ts";
import type { ShepherdApp } from "../src/compose.ts";
import { errorText } from "../src/domain/errors.ts";
import { printable } from "../src/domain/printable.ts";
import { stateDir } from "../src/protocol/layout.ts";
import { agentDirOf, envOverrides, loadSettings, type LoadedSettings } from "../src/settings.ts";
import type { DispatchContext } from "../src/context/context.ts";
import type { EntryDeps } from "../src/edge/entry.ts";
import { parts } from "./lazy-parts.ts";
import { piTrusts, projectTrusted } from "./pi-context.ts";

export interface CommandAppAccess {
  /** The app the tool uses, composed on first need. */
  appFor(ctx: ExtensionContext): Promise<ShepherdApp>;
  /** The app if it was composed already: completions must not start a runtime. */
  current(): Promise<ShepherdApp> | undefined;
  /** The tool's own entry, for this context: every subcommand that is an action runs through it. */
  entry(ctx: ExtensionContext, extra?: Pick<DispatchContext, "signal" | "onProgress" | "byPerson" | "edge">): EntryDeps;
  /** Called after each subcommand, e.g. to refresh a widget. */
  onChange?(ctx: ExtensionContext): void;
  /** `/shepherd panel`: the browser panel of this pi. */
  panel?(ctx: ExtensionContext, mode: PanelMode | undefined): Promise<string>;
  /** Where answers go (default: notifications). */
  show?: ShowOutput;
}

/** Shows what a subcommand answered; see extensions/command-output.ts. */
export type ShowOutput = (ctx: ExtensionContext, args: string, notices: Notice[]) => void;

/** Notifications where there is a UI, the console where there is none; printable either way (answers quote sheep). */
export const notifyOutput: ShowOutput = (ctx, _args, notices) => {
  for (const n of notices) {
    if (ctx.hasUI) ctx.ui.notify(printable(n.text), n.level);
    else (n.level === "info" ? console.log : console.error)(printable(n.text));
  }
};

export function registerShepherdCommand(pi: ExtensionAPI, access: CommandAppAccess): void {
  const show = access.show ?? notifyOutput;
  let cwd = process.cwd();
  // Completions get no ctx: they use the trust rule's last answer for the project, and read
  // nothing of it before there was one.
  let trustedNow = false;
  let reported = false;
  const peek = async () => {
    try {
      return await access.current();
    } catch {
      return undefined;
    }
  };
  const settingsNow = async (): Promise<LoadedSettings> => (await peek())?.loaded ?? loadSettings(agentDirOf(process.env), cwd, { projectTrusted: trustedNow });

  // Settings problems are said once, when the session starts, not left for the user to discover.
  pi.on("session_start", async (_event, ctx) => {
    cwd = ctx.cwd;
    trustedNow = projectTrusted(ctx);
    if (reported) return;
    reported = true;
    const { problems } = await loadSettings(agentDirOf(process.env), ctx.cwd, { projectTrusted: trustedNow });
    if (problems.length === 0) return;
    // A warning stays in pi's transcript as it is; only info notifications replace each other.
    const text = `pi-shepherd settings problems (see /shepherd settings):\n${problems.map((p) => `- ${p}`).join("\n")}`;
    if (ctx.hasUI) ctx.ui.notify(printable(text), "warning");
    else console.error(printable(text));
  });

  pi.registerCommand("shepherd", {
    description: commandDescription(),
    // Quick for every key typed: a menu still open when Enter comes takes that Enter. Settings are
    // read only when agent names are asked for.
    getArgumentCompletions: async (prefix) => {
      const app = await peek();
      const { completeShepherdArgs, discoverAgents, liveSheep, packageRoot, readResumeCards, resumableSheep } = await parts();
      return completeShepherdArgs(prefix, {
        agents: async () =>
          (
            await discoverAgents({
              cwd,
              scope: (await settingsNow()).settings.agentScope,
              agentDir: app?.agentDir ?? agentDirOf(process.env),
              bundledDir: app?.bundledDir ?? join(packageRoot, "agents"),
              projectTrusted: trustedNow,
            })
          ).agents,
        sheep: () => (app ? liveSheep(app.shepherd.registry) : []),
        resumable: async () => resumableSheep(readResumeCards(app?.agentDir ?? agentDirOf(process.env)), app?.shepherd.registry),
      });
    },
    handler: async (args, ctx) => {
      cwd = ctx.cwd;
      trustedNow = projectTrusted(ctx);
      const { packageRoot, readAudit, runCommand, runShepherdCommand, trustCommand } = await parts();
      const keys = await tuiKeys(ctx);
      const notices = await runShepherdCommand(args, {
        // A person's subcommand: what a wait returns is shown here, and stays owed to the model where it was.
        execute: (command, o) => runCommand(command, access.entry(ctx, { ...o, byPerson: true, edge: "command" })),
        // An answer to a person's prompt that came in before the wait was typed is shown too.
        pending: async (target) => {
          const { shepherd } = await access.entry(ctx).context();
          return shepherd.forPerson(target === undefined ? undefined : shepherd.registry.resolve(target));
        },
        watch: () => waitWatch(ctx, keys),
        log: (o) => readAudit(stateDir(agentDirOf(process.env)), o),
        settings: async () => {
          // A file written after the settings were read is said to be there, not "not present".
          const present = (loaded: LoadedSettings) => [loaded.paths.user, loaded.paths.project].filter((p) => existsSync(p));
          try {
            const app = await access.appFor(ctx);
            return { loaded: app.loaded, runtime: app.runtime, presentNow: present(app.loaded), overrides: envOverrides(process.env) };
          } catch (e) {
            // No runtime is exactly when a person needs to see the settings.
            const loaded = await settingsNow();
            return { loaded, runtimeError: errorText(e), presentNow: present(loaded), overrides: envOverrides(process.env) };
          }
        },
        now: () => Date.now(),
        ...(access.panel ? { panel: (mode: PanelMode | undefined) => access.panel!(ctx, mode) } : {}),
        trust: () => {
          const pi = piTrusts(ctx);
          return trustCommand({
            agentDir: agentDirOf(process.env),
            cwd: ctx.cwd,
            bundledDir: join(packageRoot, "agents"),
            ...(pi === undefined ? {} : { pi }),
            hasUI: ctx.hasUI,
            confirm: (title, message) => ctx.ui.confirm(title, message),
          });
        },
      });
      trustedNow = projectTrusted(ctx); // /shepherd trust may just have decided
      show(ctx, args, notices);
      try {
        access.onChange?.(ctx);
      } catch (e) {
        console.error(printable(`pi-shepherd: ${errorText(e)}`));
      }
    },
  });
}

const WAIT_STATUS = "pi-shepherd-wait";

type TuiKeys = { matchesKey(data: string, key: string): boolean };

/**
 * pi-tui's key matcher (it knows every keyboard protocol's Escape), only in pi's TUI. Imported
 * there, when a subcommand runs: the @mariozechner name is pi's alias to its own pi-tui, which
 * exists only inside pi, and this file is loaded outside pi too (tests of completions).
 */
async function tuiKeys(ctx: ExtensionContext): Promise<TuiKeys | undefined> {
  if (!ctx.hasUI || (ctx as { mode?: string }).mode !== "tui") return undefined;
  return (await import("@mariozechner/pi-tui")) as TuiKeys;
}

/**
 * A /shepherd wait's progress in the footer, and in pi's TUI Escape to stop it. The agent turn's
 * signal is not used: Escape on that turn must not end a wait the person started.
 */
function waitWatch(ctx: ExtensionContext, keys: TuiKeys | undefined): Watch {
  const stop = new AbortController();
  const tui = keys !== undefined;
  const unlisten = keys
    ? ctx.ui.onTerminalInput((data) => {
        if (!keys.matchesKey(data, "escape")) return undefined;
        stop.abort();
        return { consume: true };
      })
    : undefined;
  return {
    signal: stop.signal,
    progress: (text) => {
      if (ctx.hasUI) ctx.ui.setStatus(WAIT_STATUS, printable(`🐑 ${text}${tui ? " · Escape stops waiting" : ""}`));
    },
    end: () => {
      unlisten?.();
      if (ctx.hasUI) ctx.ui.setStatus(WAIT_STATUS, undefined);
    },
  };
}
