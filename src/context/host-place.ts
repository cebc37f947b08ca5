/**
 * Where a start or a task runs: this machine and a cwd relative to the shepherd's, or a host of the
 * `hosts` setting and a cwd on it (the shepherd's own cwd means nothing there), checked on that host.
 */
import { posix } from "node:path";
import { LOCAL_HOST } from "../domain/hosts.ts";
import { unknownHost } from "../hosts/table.ts";
import type { DispatchContext } from "./context.ts";
import { resolveCwd } from "./cwd.ts";

export interface Place {
  host?: string;
  cwd: string;
}

/** The call's host, else the agent file's; "local" is this machine. */
export function hostOf(...names: (string | undefined)[]): string | undefined {
  const name = names.find((n) => n !== undefined);
  return name === undefined || name === LOCAL_HOST ? undefined : name;
}

/** `base`: a cwd already resolved for the call on the same host (a delegation's), which a task's relative cwd is under. */
export async function placeOn(ctx: DispatchContext, host: string | undefined, cwd: string | undefined, base?: Place): Promise<Place> {
  if (host === undefined) return { cwd: resolveCwd(base?.host === undefined && base ? base.cwd : ctx.cwd, cwd) };
  const set = ctx.settings.hosts[host];
  if (!set || !ctx.hosts) throw unknownHost(host, Object.keys(ctx.settings.hosts));
  const under = base?.host === host ? base.cwd : set.cwd;
  const wanted = cwd === undefined ? under : posix.isAbsolute(cwd) || under === undefined ? cwd : posix.join(under, cwd);
  return { host, cwd: await ctx.hosts.remote(host).dir(wanted) };
}
