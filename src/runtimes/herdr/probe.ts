/**
 * What herdr is here: the binary's version (`herdr --version`) and the running server's version and
 * protocol (`herdr status server --json`, which pings without the CLI's exact-protocol check, so it
 * answers even when every other command would fail with `protocol_mismatch`).
 *
 * The runtime-choice probe asks whether there is a herdr we can drive right now: the binary is 0.7.5+,
 * its server runs with the same protocol and answers `pane list`; anything else (not installed, too
 * old, no server, protocol mismatch) is false, so an automatic choice moves on to tmux.
 */
import { HerdrCli, resolveHerdrBin } from "./cli.ts";
import { protocolMismatchError } from "./errors.ts";
import { type HerdrServerStatus, parseServerStatus } from "./status.ts";
import { checkHerdrVersion, type HerdrVersion, protocolOf } from "./version.ts";

export type { HerdrServerStatus };

export interface HerdrProbe {
  client: HerdrVersion;
  clientProtocol?: number;
  /** Undefined when `status server --json` printed nothing this adapter can read. */
  server?: HerdrServerStatus;
}

/** The binary's version (refused below the floor) and the server's status. */
export async function probeHerdr(cli: HerdrCli): Promise<HerdrProbe> {
  const client = checkHerdrVersion(await cli.text(["--version"]), cli.bin);
  const clientProtocol = protocolOf(client);
  let server: HerdrServerStatus | undefined;
  try {
    server = parseServerStatus(await cli.text(["status", "server", "--json"]));
  } catch {
    // A herdr whose status probe fails still gets its protocol checked by the CLI on every call.
    server = undefined;
  }
  return { client, ...(clientProtocol !== undefined ? { clientProtocol } : {}), ...(server ? { server } : {}) };
}

/** Throws `[runtime_unavailable]` naming both versions when the server speaks another protocol. */
export function assertCompatible(probe: HerdrProbe, bin: string): void {
  const s = probe.server;
  if (s?.running && s.compatible === false) throw protocolMismatchError(bin, probe.client.text, probe.clientProtocol, s.version, s.protocol);
}

export interface HerdrProbeOptions {
  env?: NodeJS.ProcessEnv;
  bin?: string;
  /** Kept short: the probe runs before the first sheep starts. */
  timeoutMs?: number;
}

export async function herdrServerAnswers(opts: HerdrProbeOptions = {}): Promise<boolean> {
  const env = opts.env ?? process.env;
  const cli = new HerdrCli({ bin: resolveHerdrBin(env, opts.bin), env, timeoutMs: opts.timeoutMs ?? 5_000 });
  try {
    const probe = await probeHerdr(cli);
    if (probe.server && (!probe.server.running || probe.server.compatible === false)) return false;
    await cli.request(["pane", "list"], "pane_list");
    return true;
  } catch {
    return false;
  }
}
