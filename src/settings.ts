import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { HOST_NAME, LOCAL_HOST } from "./domain/hosts.ts";
import { DEFAULT_WARM_MEMORY_MB } from "./domain/bounds.ts";
import { stateDir } from "./protocol/layout.ts";
import { type DailyBudgets, dailyBudgetsProblem } from "./domain/budget.ts";
import { DEFAULT_SANDBOX, sandboxProblem, type SandboxSettings } from "./sandbox/settings.ts";
import { DEFAULT_NOTIFY, notifyProblem, type NotifySettings } from "./notify/settings.ts";

export interface Settings {
  runtime: "auto" | "herdr" | "tmux";
  placement: "tab" | "pane" | "workspace";
  direction: "right" | "down";
  /** Seconds. */
  waitTimeout: number;
  maxParallel: number;
  maxTasks: number;
  agentScope: "user" | "project" | "both";
  confirmProjectAgents: boolean;
  /** User-only: lets project agents run without a UI to confirm them. */
  allowProjectAgentsWithoutUI: boolean;
  /** User-only: how deep sheep may start sheep of their own (0 = sheep cannot). */
  maxDepth: number;
  /** Command (argv) that runs pi for sheep; default: the shepherd's own node and pi. */
  piCommand?: string[];
  /** Seconds a sheep may take to become ready. */
  startTimeout: number;
  /** Close this shepherd's sheep when the shepherd pi quits. */
  closeOnExit: boolean;
  /** Record each prompt's changes (git) as evidence in its result. */
  evidence: boolean;
  /** Lines of a prompt's patch shown inline in its result; the whole patch is on disk. */
  diffInlineLines: number;
  /** User-only: short names for what pi's --model takes, e.g. {"fast": "anthropic/claude-haiku-4-5"}. */
  models: Record<string, string>;
  /** User-only: ready, idle sheep kept per agent definition, e.g. {"scout": 1, "worker": 2}. */
  warm: Record<string, number>;
  /**
   * User-only: the memory the warm pool may hold, in MB. Delegated sheep whose task is done come
   * back into it (a fresh conversation in the same pi) while the pool holds fewer than this over
   * WARM_SHEEP_MB (src/domain/bounds.ts); 0: none come back.
   */
  warmMemory: number;
  /**
   * User-only: while the model streams a `shepherd` call that will start sheep, boot them ahead
   * (within warmMemory) for the call to take (issue 36).
   */
  speculativeStart: boolean;
  /** User-only: other machines sheep may run on, by name, reached over OpenSSH. */
  hosts: Record<string, HostSettings>;
  /** User-only: the browser panel (src/panel): on when the session begins, and its port on 127.0.0.1 (unset: 7300 + uid % 500; 0: a free one). */
  panel: PanelSettings;
  /** User-only: sheep in bubblewrap (src/sandbox, docs/sandbox.md): "on" for all, and what they may read, write and reach. */
  sandbox: SandboxSettings;
  /** User-only: where the herd tells a person who walked away what it needs (src/notify, docs/leaving-the-herd-running.md). */
  notify: NotifySettings;
  /** User-only: what the herd may spend in a UTC day across every shepherd of the user, and where the warning goes out (spec: Budgets). */
  budgets: DailyBudgets;
}

export interface PanelSettings {
  autostart: boolean;
  /** Unset: the user's stable port (src/panel/stable-port.ts); 0: a free one. */
  port?: number;
}

/** One machine of the `hosts` setting. */
export interface HostSettings {
  /** What ssh takes as its destination: host, user@host, or a Host alias of ~/.ssh/config. */
  ssh: string;
  runtime?: "auto" | "tmux" | "herdr";
  /** pi's agent dir there; default: the remote user's ~/.pi/agent. */
  agentDir?: string;
  /** The command (argv) that runs pi there; default: ["pi"]. */
  piCommand?: string[];
  /** The node that runs pi-shepherd's own program there; default: "node". */
  node?: string;
  /** Where a sheep starts there when the call names no cwd; default: the remote user's home. */
  cwd?: string;
  /** More of ssh's options, e.g. ["-o", "ProxyJump=bastion"], after ours. */
  sshOptions?: string[];
  /** Names of this machine's variables a sheep there gets (provider keys): sent over the connection, never on a command line. */
  forwardEnv?: string[];
}

/** Warm sheep one definition may keep: each is a resident pi. */
export const MAX_WARM_PER_AGENT = 8;

export const DEFAULT_SETTINGS: Settings = {
  runtime: "auto",
  placement: "tab",
  direction: "right",
  waitTimeout: 1200,
  maxParallel: 4,
  maxTasks: 8,
  agentScope: "user",
  confirmProjectAgents: true,
  allowProjectAgentsWithoutUI: false,
  maxDepth: 0,
  startTimeout: 60,
  closeOnExit: true,
  evidence: true,
  diffInlineLines: 200,
  models: {},
  warm: {},
  warmMemory: DEFAULT_WARM_MEMORY_MB,
  speculativeStart: true,
  hosts: {},
  panel: { autostart: false },
  sandbox: DEFAULT_SANDBOX,
  notify: DEFAULT_NOTIFY,
  budgets: {},
};

/**
 * Keys a repository must not control, even one the person trusted: each widens what runs, for how
 * long or unwatched, or changes what the person is told. A project's file may set only `runtime`,
 * `placement` and `direction` (where the sheep's panes go); every other key is here.
 */
export const USER_ONLY: ReadonlySet<keyof Settings> = new Set<keyof Settings>([
  // Which waits block for how long, and how long a start may take: a week-long wait holds the shepherd.
  "waitTimeout",
  "startTimeout",
  // How many sheep one delegation starts and runs at once.
  "maxParallel",
  "maxTasks",
  // Whether the repository's own agent files are used at all.
  "agentScope",
  // Whether project agents run unasked, or without a UI to ask.
  "confirmProjectAgents",
  "allowProjectAgentsWithoutUI",
  // What a sheep may spawn, and which program runs as pi.
  "maxDepth",
  "piCommand",
  // Sheep left running after the shepherd quits.
  "closeOnExit",
  // What the person and the model are shown of a sheep's changes: hiding them is not the repository's call.
  "evidence",
  "diffInlineLines",
  // Which model a name the user typed really reaches.
  "models",
  // Each warm sheep is a pi that runs unasked: a repository must not make the machine start them.
  "warm",
  "warmMemory",
  "speculativeStart",
  // Which machines the shepherd logs into, as whom, with which ssh options: never a repository's choice.
  "hosts",
  // A port that serves the herd and takes prompts: whether it opens, and where, is the person's call.
  "panel",
  // What a sheep may read, write and reach: a repository must never loosen its own sandbox.
  "sandbox",
  // Where the herd's news goes: a repository must never send it to a URL of its choosing.
  "notify",
  // What the herd may spend: a repository must never raise it.
  "budgets",
]);

type Check = (v: unknown) => boolean;
const oneOf =
  (...xs: string[]): Check =>
  (v) =>
    typeof v === "string" && xs.includes(v);
const positiveInt: Check = (v) => typeof v === "number" && Number.isInteger(v) && v > 0;
const bool: Check = (v) => typeof v === "boolean";
/** What pi's --model takes: one plain word that cannot be read as an option. */
const modelName = (v: unknown) => typeof v === "string" && v.trim() !== "" && !v.startsWith("-") && !/[\s\u0000-\u001f\u007f]/.test(v);
const aliasMap: Check = (v) =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.entries(v).every(([k, x]) => modelName(k) && !k.includes(":") && modelName(x));

const warmSizes: Check = (v) =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.entries(v).every(([k, n]) => modelName(k) && typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= MAX_WARM_PER_AGENT);

const argv: Check = (v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && x !== "");
const plainText = (v: unknown) => typeof v === "string" && v !== "" && !/[\u0000-\u001f\u007f]/.test(v);
const HOST_FIELDS: Record<keyof HostSettings, Check> = {
  // ssh would read a destination starting with "-" as an option (-oProxyCommand=…).
  ssh: (v) => plainText(v) && !(v as string).startsWith("-") && !/\s/.test(v as string),
  runtime: oneOf("auto", "tmux", "herdr"),
  agentDir: plainText,
  piCommand: argv,
  node: plainText,
  cwd: plainText,
  sshOptions: (v) => Array.isArray(v) && v.every((x) => typeof x === "string" && !/[\u0000\n\r]/.test(x)),
  forwardEnv: (v) => Array.isArray(v) && v.every((x) => typeof x === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(x)),
};
/** Why a `hosts` value is not one; undefined when it is. */
export function hostsProblem(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "an object of name -> host";
  for (const [name, h] of Object.entries(v)) {
    if (name === LOCAL_HOST) return `"${LOCAL_HOST}" always means this machine and cannot name a host`;
    if (!HOST_NAME.test(name)) return `host name ${JSON.stringify(name)} is not 1-32 of a-z, 0-9 and "-" (starting with a letter or digit)`;
    if (typeof h !== "object" || h === null || Array.isArray(h)) return `host "${name}" is not an object like {"ssh": "user@machine"}`;
    for (const [k, x] of Object.entries(h)) {
      const check = HOST_FIELDS[k as keyof HostSettings];
      if (!check) return `host "${name}" has an unknown key "${k}" (known: ${Object.keys(HOST_FIELDS).join(", ")})`;
      if (!check(x)) return `host "${name}": "${k}" is not valid`;
    }
    if (typeof (h as { ssh?: unknown }).ssh !== "string") return `host "${name}" needs "ssh": the destination as ssh takes it`;
  }
  return undefined;
}
const panelSettings: Check = (v) => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return (
    Object.keys(o).every((k) => k === "autostart" || k === "port") &&
    (o.autostart === undefined || typeof o.autostart === "boolean") &&
    (o.port === undefined || (typeof o.port === "number" && Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535))
  );
};

const CHECKS: Record<keyof Settings, [Check, string]> = {
  runtime: [oneOf("auto", "herdr", "tmux"), '"auto", "herdr" or "tmux"'],
  placement: [oneOf("tab", "pane", "workspace"), '"tab", "pane" or "workspace"'],
  direction: [oneOf("right", "down"), '"right" or "down"'],
  waitTimeout: [positiveInt, "a whole number of seconds above 0"],
  maxParallel: [positiveInt, "a whole number above 0"],
  maxTasks: [positiveInt, "a whole number above 0"],
  agentScope: [oneOf("user", "project", "both"), '"user", "project" or "both"'],
  confirmProjectAgents: [bool, "true or false"],
  allowProjectAgentsWithoutUI: [bool, "true or false"],
  maxDepth: [(v) => typeof v === "number" && Number.isInteger(v) && v >= 0, "a whole number of 0 or more"],
  piCommand: [(v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && x !== ""), "a non-empty list of strings (argv)"],
  startTimeout: [positiveInt, "a whole number of seconds above 0"],
  closeOnExit: [bool, "true or false"],
  evidence: [bool, "true or false"],
  diffInlineLines: [(v) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 100_000, "a whole number from 0 to 100000"],
  models: [aliasMap, 'an object of alias -> model, e.g. {"fast": "anthropic/claude-haiku-4-5"} (names without spaces, ":" or a leading "-")'],
  hosts: [(v) => hostsProblem(v) === undefined, 'an object of name -> {"ssh": "user@machine", …} (see README, Sheep on other machines)'],
  warm: [warmSizes, `an object of agent name -> ready sheep to keep, 0-${MAX_WARM_PER_AGENT}, e.g. {"scout": 1, "worker": 2}`],
  panel: [panelSettings, 'an object {"autostart": true or false, "port": 0-65535} (unset: 7300 + uid % 500; 0: a free port)'],
  warmMemory: [(v) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65_536, "a whole number of MB, 0-65536 (0: no delegated sheep come back)"],
  speculativeStart: [bool, "true or false"],
  sandbox: [
    (v) => sandboxProblem(v) === undefined,
    'an object {"default": "off" or "on", "allowRead", "allowWrite", "denyRead": [paths], "allowNetwork": ["host[:port]"]}',
  ],
  notify: [
    (v) => notifyProblem(v) === undefined,
    'an object {"channels": [{"type": "desktop" | "webhook" | "ntfy" | "terminal" | "browser", "url"?, "events"?, "format"?}]} (docs/leaving-the-herd-running.md)',
  ],
  budgets: [
    (v) => dailyBudgetsProblem(v) === undefined,
    'an object {"dailyTokens"?: n, "dailyCostUsd"?: x, "warnAt"?: 0.8} (numbers above 0; warnAt at most 1)',
  ],
};

/** Every known key, in the order they are documented. */
export const SETTING_KEYS = Object.keys(CHECKS) as (keyof Settings)[];

/** Environment variables that rule over a setting, as `NAME="value"` by the key they override (the runtime's choice reads them so). */
export function envOverrides(env: Readonly<Record<string, string | undefined>>): Partial<Record<keyof Settings, string>> {
  const runtime = env.PI_SHEPHERD_RUNTIME?.trim();
  return runtime ? { runtime: `PI_SHEPHERD_RUNTIME=${JSON.stringify(runtime)}` } : {};
}

/** What a person does about an untrusted project's files. */
export const UNTRUSTED_HINT = "/shepherd trust shows its files and asks you";

export type SettingsOrigin = "default" | "user" | "project";

export interface LoadedSettings {
  settings: Settings;
  /** Unknown keys and bad values, each with its file: reported, never silently ignored. */
  problems: string[];
  /** The files that were found and read. */
  files: string[];
  /** Where each setting in effect came from. */
  origins: Record<keyof Settings, SettingsOrigin>;
  paths: { user: string; project: string };
}

/** pi's agent directory, as pi finds it: PI_CODING_AGENT_DIR, else ~/.pi/agent. */
export function agentDirOf(env: NodeJS.ProcessEnv): string {
  const dir = env.PI_CODING_AGENT_DIR;
  if (dir) return resolve(dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir);
  return join(homedir(), ".pi", "agent");
}

export function userSettingsPath(agentDir: string): string {
  return join(stateDir(agentDir), "settings.json");
}

export function projectSettingsPath(cwd: string): string {
  return join(cwd, ".pi", "shepherd.json");
}

async function readSettingsFile(path: string): Promise<{ data?: Record<string, unknown>; problem?: string }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { problem: `${path}: cannot be read (${(e as Error).message})` };
  }
  try {
    const data = JSON.parse(text) as unknown;
    if (!data || typeof data !== "object" || Array.isArray(data)) return { problem: `${path}: must hold a JSON object` };
    return { data: data as Record<string, unknown> };
  } catch (e) {
    return { problem: `${path}: is not valid JSON (${(e as Error).message})` };
  }
}

/**
 * User settings (`<agentDir>/pi-shepherd/settings.json`), then project (`<cwd>/.pi/shepherd.json`).
 * The project's file applies only with `projectTrusted: true` (pi-shepherd's trust rule, see
 * src/project-trust.ts); otherwise it is left out entirely and that is reported with the keys it
 * would have set: a repository nobody trusted does not get to steer the shepherd. Even then its
 * user-only keys are ignored, each reported.
 */
export async function loadSettings(agentDir: string, cwd: string, opts: { projectTrusted?: boolean } = {}): Promise<LoadedSettings> {
  const settings: Settings = { ...DEFAULT_SETTINGS };
  const origins = Object.fromEntries(SETTING_KEYS.map((k) => [k, "default"])) as Record<keyof Settings, SettingsOrigin>;
  const problems: string[] = [];
  const files: string[] = [];
  const paths = { user: userSettingsPath(agentDir), project: projectSettingsPath(cwd) };
  const layers: [string, "user" | "project"][] = [
    [paths.user, "user"],
    [paths.project, "project"],
  ];
  for (const [path, origin] of layers) {
    const { data, problem } = await readSettingsFile(path);
    if (problem) problems.push(problem);
    if (!data) continue;
    if (origin === "project" && opts.projectTrusted !== true) {
      const keys = Object.keys(data).filter((k) => Object.hasOwn(CHECKS, k));
      const sets = keys.length ? ` (it sets ${keys.join(", ")})` : "";
      problems.push(`${path}: not applied${sets}, because pi-shepherd does not trust this project (${UNTRUSTED_HINT})`);
      continue;
    }
    files.push(path);
    for (const [key, value] of Object.entries(data)) {
      if (!Object.hasOwn(CHECKS, key)) {
        problems.push(`${path}: unknown key "${key}" (known: ${SETTING_KEYS.join(", ")})`);
        continue;
      }
      const k = key as keyof Settings;
      if (origin === "project" && USER_ONLY.has(k)) {
        problems.push(`${path}: "${key}" can only be set in the user's settings (${paths.user}); ignored here`);
        continue;
      }
      const [check, expected] = CHECKS[k];
      if (!check(value)) {
        const kept = settings[k] === undefined ? "the default" : JSON.stringify(settings[k]);
        const why =
          k === "hosts" ? `: ${hostsProblem(value)}` : k === "sandbox" ? `: ${sandboxProblem(value)}` : k === "notify" ? `: ${notifyProblem(value)}` : "";
        problems.push(`${path}: "${key}" must be ${expected}${why}; kept ${kept}`);
        continue;
      }
      // The panel's keys each have a default: an object that sets one keeps the other's.
      (settings as unknown as Record<string, unknown>)[k] =
        k === "panel" ? { ...DEFAULT_SETTINGS.panel, ...(value as object) } : k === "notify" ? { ...DEFAULT_NOTIFY, ...(value as object) } : value;
      origins[k] = origin;
    }
  }
  return { settings, problems, files, origins, paths };
}
