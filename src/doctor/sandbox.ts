/** Whether sandboxed sheep can start on this machine: bubblewrap, and the user namespaces it needs. */
import { readFileSync } from "node:fs";
import { type BwrapCheck, checkBwrap, INSTALL_HINT } from "../sandbox/probe.ts";
import type { SandboxSettings } from "../sandbox/settings.ts";
import { fail, pass, warn, type Check } from "./types.ts";

/** The kernel's switches for unprivileged user namespaces, as read from /proc/sys (here, or on a host). */
export interface UsernsSwitches {
  clone?: string;
  max?: string;
  apparmor?: string;
}

/** What the kernel's switches say against unprivileged user namespaces, where they say anything. */
export function usernsProblem(s: UsernsSwitches): string | undefined {
  if (s.clone === "0") return "kernel.unprivileged_userns_clone is 0";
  if (s.max === "0") return "user.max_user_namespaces is 0";
  if (s.apparmor === "1") return "AppArmor restricts unprivileged user namespaces";
  return undefined;
}

function userNamespaces(): string | undefined {
  const read = (p: string) => {
    try {
      return readFileSync(p, "utf8").trim();
    } catch {
      return undefined;
    }
  };
  return usernsProblem({
    ...optional("clone", read("/proc/sys/kernel/unprivileged_userns_clone")),
    ...optional("max", read("/proc/sys/user/max_user_namespaces")),
    ...optional("apparmor", read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")),
  });
}

const optional = (k: keyof UsernsSwitches, v: string | undefined): UsernsSwitches => (v === undefined ? {} : { [k]: v });

/** A failure where the user's default is "on" (no sheep can start), else a warning (only sandboxed starts fail). */
export async function sandboxCheck(
  settings: SandboxSettings,
  env: NodeJS.ProcessEnv,
  check: (env: NodeJS.ProcessEnv) => Promise<BwrapCheck> = (e) => checkBwrap("bwrap", e),
  platform: string = process.platform,
): Promise<Check> {
  const bad = settings.default === "on" ? fail : warn;
  if (platform !== "linux") {
    return bad("sandbox", `sandboxed sheep need Linux; this is ${platform}`, 'leave "sandbox.default" off here: macOS is not supported yet');
  }
  const c = await check(env);
  if (c.ok) return pass("sandbox", `bubblewrap at ${c.path} makes a sandbox here (default ${settings.default})`);
  const ns = userNamespaces();
  return bad("sandbox", `sandboxed sheep cannot start: ${c.problem}${ns ? `; ${ns}` : ""}`, INSTALL_HINT);
}
