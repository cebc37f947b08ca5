/**
 * Starting a herdr server of our own, for a shepherd that runs outside herdr with herdr chosen and
 * no server up (as the tmux runtime starts its detached session's server). Before 0.9.4 a
 * foreground `herdr server` stops on SIGHUP and ends every pane with it (#2957), which is what a
 * closing terminal sends its session: so the server gets a session of its own (setsid, through
 * `detached`) with stdio on /dev/null, as bare `herdr` starts its daemon, and survives the terminal on
 * every version (0.9.4's own fix is known only from its release notes: the safe reading detaches on
 * 0.9.4+ too). A server that was already running is the user's: it is never stopped by us.
 */
import { execa } from "execa";
import { ShepherdError } from "../../domain/errors.ts";
import type { HerdrCli } from "./cli.ts";
import { parseServerStatus } from "./status.ts";

const READY_POLLS = 100;
const POLL_MS = 50;

export async function startHerdrServer(cli: HerdrCli, env: NodeJS.ProcessEnv): Promise<void> {
  const child = execa(cli.bin, ["server"], { env, extendEnv: false, detached: true, stdio: "ignore", cleanup: false, reject: false });
  child.unref();
  // Nobody awaits the server: it outlives this call (and the shepherd).
  child.catch(() => undefined);
  for (let i = 0; i < READY_POLLS; i++) {
    const status = parseServerStatus(await cli.text(["status", "server", "--json"]).catch(() => ""));
    if (status?.running) return;
    if (child.exitCode !== null && child.exitCode !== undefined) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new ShepherdError(
    "runtime_unavailable",
    `no herdr server was running and \`${cli.bin} server\` did not bring one up. Start herdr yourself (run \`herdr\`), or set PI_SHEPHERD_RUNTIME=tmux to use tmux instead.`,
  );
}
