/** Which runtime would be chosen and why; tmux and herdr, each found or not, and what that means. */
import { errorText, isShepherdError } from "../domain/errors.ts";
import type { RuntimeName } from "../ports/runtime.ts";
import { explainRuntime } from "../runtimes/choose.ts";
import { HerdrCli, resolveHerdrBin } from "../runtimes/herdr/cli.ts";
import { herdrServerAnswers, MIN_HERDR_VERSION, RECOMMENDED_HERDR_VERSION } from "../runtimes/herdr/index.ts";
import { isHerdrCode } from "../runtimes/herdr/errors.ts";
import { assertCompatible, probeHerdr } from "../runtimes/herdr/probe.ts";
import { describeVersion, meetsFloor, parseHerdrVersion, protocolOf } from "../runtimes/herdr/version.ts";
import { tmuxVersion } from "../runtimes/tmux/tmux-cli.ts";
import { plain } from "./config.ts";
import { fail, pass, warn, type Check } from "./types.ts";

const INSTALL_TMUX = "install tmux (apt-get install tmux, or brew install tmux)";
const INSTALL_HERDR = "install herdr (https://herdr.dev), or set PI_SHEPHERD_HERDR_BIN to its executable";

export interface RuntimeChecks {
  checks: Check[];
  /** The runtime a start would use now; undefined when none would work. */
  chosen?: RuntimeName;
}

export async function runtimeChecks(env: NodeJS.ProcessEnv, setting: string): Promise<RuntimeChecks> {
  const checks: Check[] = [];
  let chosen: RuntimeName | undefined;
  const tmux = await tmuxVersion(env);
  try {
    const r = await explainRuntime({
      setting,
      env,
      probes: { herdrServerAnswers: () => herdrServerAnswers({ env }), tmuxInstalled: async () => tmux !== undefined },
    });
    chosen = r.runtime;
    checks.push(pass("runtime", `${r.runtime}, because ${r.why}`));
  } catch (e) {
    const detail = errorText(e)
      .replace(/^\[\w+\] /, "")
      .split(". ")[0]!;
    const fix = isShepherdError(e, "invalid_params")
      ? 'set PI_SHEPHERD_RUNTIME (or the "runtime" setting) to auto, herdr or tmux'
      : `${INSTALL_TMUX}; or ${INSTALL_HERDR} and start it by running \`herdr\``;
    checks.push(fail("runtime", plain(detail), fix));
  }
  checks.push(tmuxCheck(tmux, chosen, env));
  checks.push(await herdrCheck(env, chosen));
  return { checks, ...(chosen ? { chosen } : {}) };
}

function tmuxCheck(version: string | undefined, chosen: RuntimeName | undefined, env: NodeJS.ProcessEnv): Check {
  const socket = env.PI_SHEPHERD_TMUX_SOCKET ? ` (server socket ${env.PI_SHEPHERD_TMUX_SOCKET})` : "";
  if (version) return pass("tmux", `${version}${socket}`);
  if (chosen === "herdr") return pass("tmux", "not found on PATH; not needed, herdr is used");
  return fail("tmux", "not found on PATH", INSTALL_TMUX);
}

async function herdrCheck(env: NodeJS.ProcessEnv, chosen: RuntimeName | undefined): Promise<Check> {
  const cli = new HerdrCli({ bin: resolveHerdrBin(env), env, timeoutMs: 5_000 });
  // Not needed when tmux is used: what is wrong with herdr then only warns, or passes when it is absent.
  const needed = chosen !== "tmux";
  let printed: string;
  try {
    printed = await cli.text(["--version"]);
  } catch {
    return needed ? fail("herdr", `${cli.bin} not found`, INSTALL_HERDR) : pass("herdr", `${cli.bin} not found; not needed, tmux is used`);
  }
  const v = parseHerdrVersion(printed);
  if (!v || !meetsFloor(v)) {
    const detail = `${cli.bin} is ${v ? `herdr ${v.text}` : `not a herdr I can read (${JSON.stringify(printed.trim().slice(0, 60))})`}; pi-shepherd needs ${MIN_HERDR_VERSION} or newer`;
    const fix = `update herdr to ${RECOMMENDED_HERDR_VERSION} (https://herdr.dev/install.sh)`;
    return needed ? fail("herdr", detail, fix) : warn("herdr", `${detail} (tmux is used meanwhile)`, fix);
  }
  const found = describeVersion(v.text, protocolOf(v));
  try {
    const probe = await probeHerdr(cli);
    // A server of another protocol refuses every command: both versions, and what to run instead.
    assertCompatible(probe, cli.bin);
    await cli.request(["pane", "list"], "pane_list");
    const server = probe.server?.running ? `its server ${describeVersion(probe.server.version, probe.server.protocol).replace(/^herdr /, "")}` : "its server";
    return pass("herdr", `${found}, ${server} answers`);
  } catch (e) {
    const text = errorText(e).replace(/^\[\w+\] /, "");
    if (isHerdrCode(e, "protocol_mismatch")) {
      const [detail, ...fix] = text.split(". ");
      return needed ? fail("herdr", plain(detail!), plain(fix.join(". "))) : warn("herdr", `${plain(detail!)} (tmux is used meanwhile)`, plain(fix.join(". ")));
    }
    const detail = `${found}, but its server does not answer (${text.slice(0, 120)})`;
    if (!needed) return pass("herdr", `${detail}; not needed, tmux is used`);
    // Outside herdr the first start runs a server of its own (runtimes/herdr/server.ts); inside, it is the user's.
    if (isHerdrCode(e, "server_not_running") && env.HERDR_ENV !== "1") {
      return warn(
        "herdr",
        `${found}, no herdr server runs; the first start runs \`herdr server\` for the sheep`,
        "start herdr yourself (run `herdr`) to watch the sheep",
      );
    }
    return fail("herdr", detail, "start herdr by running `herdr`");
  }
}
