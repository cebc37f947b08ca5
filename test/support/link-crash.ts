/**
 * A process that holds a RemoteSession and is then killed (a shepherd that crashed): argv[2] is its
 * options as JSON ({alias, sshConfig, stateDir, agentDir, idle}); it prints "up <masterPid> <agentPid>"
 * once connected and waits to be killed.
 */
import { RemoteSession } from "../../src/remote/link/session.ts";
import { linkBundle } from "./link-bundle.ts";

const o = JSON.parse(process.argv[2] ?? "{}") as { alias: string; sshConfig: string; stateDir: string; agentDir: string; idle: number };
const s = new RemoteSession({
  host: { name: "box", ssh: o.alias, sshOptions: ["-F", o.sshConfig], agentDir: o.agentDir },
  localStateDir: o.stateDir,
  bundle: () => linkBundle(),
  init: (d) => ({ agentDir: d.agentDir, runtime: "tmux", piCommand: ["pi"], depth: 1, env: {} }),
  masterIdleSeconds: o.idle,
});
await s.connect();
const st = s.state();
const info = (await s.call("sys.info", [])) as { pid: number };
if (st.status === "up") process.stdout.write(`up ${st.masterPid} ${info.pid}\n`);
setInterval(() => undefined, 60_000);
