// A stand-in for the remote agent, for the link's own tests (the real one is src/remote/server):
// it speaks the agent protocol's framing (hello, answers, change events) and nothing else.
// `link.init` answers what init carried, so a test can see the secrets arrived over stdin.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { homedir } from "node:os";

const bundle = basename(dirname(fileURLToPath(import.meta.url)));
const out = (v) => process.stdout.write(`${JSON.stringify(v)}\n`);
process.stdout.on("error", () => process.exit(0));
out({ hello: { protocol: 1, bundle, pid: process.pid, node: process.version } });
let init;
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => {
  buf += d;
  for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    const { id, m, p } = JSON.parse(line);
    if (m === "init") {
      init = p[0];
      out({ id, ok: { runtime: "tmux", stateDir: `${init.agentDir}/pi-shepherd`, home: homedir() } });
      // LINK_AGENT_EXITS names a file holding how many agents yet are to end right after init.
      const exits = init.env?.LINK_AGENT_EXITS;
      const left = exits ? Number(readFileSync(exits, "utf8")) : 0;
      if (left > 0) {
        writeFileSync(exits, String(left - 1));
        process.exit(0);
      }
    } else if (m === "link.init") out({ id, ok: init ?? null });
    else if (m === "sys.info") out({ id, ok: { node: process.version, pid: process.pid, stateDirMode: null } });
    else if (m === "echo") out({ id, ok: p });
    else if (m === "files.subscribe") {
      out({ id });
      out({ ev: "change", agentId: p[0] });
    } else if (m === "files.unsubscribe") out({ id });
    else if (m === "hang") {
      // never answered: a call still on its way when the connection goes
    } else out({ id, err: { code: "protocol_error", message: `unknown method ${m}` } });
  }
});
process.stdin.on("end", () => process.exit(0));
