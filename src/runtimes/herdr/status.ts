/** The answer of `herdr status server --json` (exists since 0.7.5; `v0.7.5:src/cli/status.rs`). */
import { isRecord } from "../../domain/guards.ts";

export interface HerdrServerStatus {
  running: boolean;
  version?: string;
  protocol?: number;
  /** The server's protocol equals the binary's; unknown when herdr did not say. */
  compatible?: boolean;
  /** `detached_server_daemon`: the server leads its own session, so a closing terminal cannot stop it. */
  detached?: boolean;
}

/** Reads `status server --json` leniently: 0.9.x adds fields, and unknown keys are ignored. */
export function parseServerStatus(stdout: string): HerdrServerStatus | undefined {
  let v: unknown;
  try {
    v = JSON.parse(stdout.trim().split("\n").pop() ?? "");
  } catch {
    return undefined;
  }
  if (!isRecord(v) || (v.status !== "running" && v.status !== "not_running")) return undefined;
  const out: HerdrServerStatus = { running: v.status === "running" };
  if (typeof v.version === "string") out.version = v.version;
  if (typeof v.protocol === "number") out.protocol = v.protocol;
  if (typeof v.compatible === "boolean") out.compatible = v.compatible;
  if (isRecord(v.capabilities) && typeof v.capabilities.detached_server_daemon === "boolean") out.detached = v.capabilities.detached_server_daemon;
  return out;
}
