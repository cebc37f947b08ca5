import { execa } from "execa";
import { join } from "node:path";
import type { LoggedRequest } from "../../test/support/scripted-model.ts";
import { repoRoot } from "../../test/support/rpc-shepherd.ts";

export interface ModelProcess {
  baseUrl: string;
  pid: number;
  log(): Promise<LoggedRequest[]>;
  /** The log entry carrying this tag, once its answer has been sent in full. */
  entry(tag: string): Promise<LoggedRequest>;
  close(): Promise<void>;
}

/** Starts bench/model-server.ts as a child and talks to it over loopback HTTP. */
export async function startModelProcess(): Promise<ModelProcess> {
  const child = execa(process.execPath, ["--import", "tsx", join(repoRoot, "bench", "model-server.ts")], {
    cwd: repoRoot,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    buffer: false,
    reject: false,
  });
  const first = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      const i = buf.indexOf("\n");
      if (i >= 0) resolve(buf.slice(0, i));
    });
    void child.then((r) => reject(new Error(`the scripted model exited early (${r.exitCode})`)));
  });
  const { port, baseUrl } = JSON.parse(first) as { port: number; baseUrl: string };
  const log = async () => (await (await fetch(`http://127.0.0.1:${port}/log`)).json()) as LoggedRequest[];
  return {
    baseUrl,
    pid: child.pid!,
    log,
    async entry(tag) {
      for (let i = 0; i < 200; i++) {
        const e = (await log()).find((l) => l.tag === tag && l.lastByteAt !== undefined);
        if (e) return e;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`the scripted model never answered the request tagged ${tag}`);
    },
    async close() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await child;
      clearTimeout(timer);
    },
  };
}
