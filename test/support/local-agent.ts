/**
 * The remote agent without ssh: the real bundle (src/remote/bundle.ts) written into a private
 * bin/<hash>/ directory as a deploy would, run by a local node over pipes, with an RpcClient on
 * its stdio. close() ends its stdin and waits for it to end; a process that does not is killed
 * by its pid.
 */
import { execa } from "execa";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hello, InitAnswer, InitParams } from "../../src/remote/rpc/call.ts";
import { RpcClient } from "../../src/remote/rpc/client.ts";
import { remoteBundle } from "../../src/remote/bundle.ts";
import { testNode, testPiCli } from "./rpc-shepherd.ts";

export interface LocalAgent {
  client: RpcClient;
  hello: Hello;
  /** The bundle's directory: bin/<hash>/ under the agent's temp dir. */
  binDir: string;
  pid: number;
  /** What the agent wrote to stderr so far. */
  stderr(): string;
  /** Its exit, once it has ended. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Ends its stdin (the agent ends), then removes the temp dir it was written to. */
  close(): Promise<void>;
}

export interface LocalAgentOptions {
  /** The host's name for the client's errors (default "test-host"). */
  host?: string;
  node?: string;
  env?: NodeJS.ProcessEnv;
}

export async function spawnLocalAgent(o: LocalAgentOptions = {}): Promise<LocalAgent> {
  const bundle = await remoteBundle();
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-agent-bin-"));
  const binDir = join(dir, "bin", bundle.hash);
  await mkdir(binDir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  for (const f of bundle.files) await writeFile(join(binDir, f.name), f.content, { mode: 0o600 });
  const child = execa(o.node ?? testNode, [join(binDir, "agent.mjs")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    cwd: dir,
    env: o.env ?? process.env,
    extendEnv: false,
  });
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  const exited = child.then((r) => ({ code: r.exitCode ?? null, signal: r.signal ?? null }));
  const client = new RpcClient({ input: child.stdout!, output: child.stdin!, host: o.host ?? "test-host" });
  const pid = child.pid!;
  let hello: Hello;
  try {
    hello = await client.hello;
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the local agent did not say hello: ${(e as Error).message}\n${err}`);
  }
  return {
    client,
    hello,
    binDir,
    pid,
    stderr: () => err,
    exited,
    close: async () => {
      client.close();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** init's parameters for a test's agent dir: the test's node and pi, tmux, the scripted model offline. */
export function testInit(agentDir: string, o: Partial<InitParams> = {}): InitParams {
  return { agentDir, runtime: "tmux", piCommand: [testNode, testPiCli], depth: 1, env: { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" }, ...o };
}

export async function initAgent(agent: LocalAgent, params: InitParams): Promise<InitAnswer> {
  return (await agent.client.call("init", [params])) as InitAnswer;
}
