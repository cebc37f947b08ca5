import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { stateDir } from "./protocol/layout.js";

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
}

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
};

const USER_ONLY = new Set(["allowProjectAgentsWithoutUI", "maxDepth", "piCommand", "confirmProjectAgents"]);

type Check = (v: unknown) => boolean;
const oneOf = (...xs: string[]): Check => (v) => typeof v === "string" && xs.includes(v);
const positiveInt: Check = (v) => typeof v === "number" && Number.isInteger(v) && v > 0;
const bool: Check = (v) => typeof v === "boolean";

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
};

export interface LoadedSettings {
  settings: Settings;
  /** Unknown keys and bad values, each with its file: reported, never silently ignored. */
  problems: string[];
  files: string[];
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

/** User settings (`<agentDir>/pi-shepherd/settings.json`), then project (`<cwd>/.pi/shepherd.json`). */
export async function loadSettings(agentDir: string, cwd: string): Promise<LoadedSettings> {
  const settings: Settings = { ...DEFAULT_SETTINGS };
  const problems: string[] = [];
  const files: string[] = [];
  const layers: [string, boolean][] = [
    [join(stateDir(agentDir), "settings.json"), true],
    [join(cwd, ".pi", "shepherd.json"), false],
  ];
  for (const [path, isUser] of layers) {
    const { data, problem } = await readSettingsFile(path);
    if (problem) problems.push(problem);
    if (!data) continue;
    files.push(path);
    for (const [key, value] of Object.entries(data)) {
      const check = CHECKS[key as keyof Settings];
      if (!check) {
        problems.push(`${path}: unknown key "${key}"`);
        continue;
      }
      if (!isUser && USER_ONLY.has(key)) {
        problems.push(`${path}: "${key}" can only be set in the user's settings (${layers[0]![0]}); ignored here`);
        continue;
      }
      if (!check[0](value)) {
        problems.push(`${path}: "${key}" must be ${check[1]}; kept ${JSON.stringify(settings[key as keyof Settings])}`);
        continue;
      }
      (settings as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return { settings, problems, files };
}
