/**
 * The escape suite's attempts as shell text (test/e2e/sandbox-escape.test.ts, sandbox-remote.test.ts):
 * each attempt one line that prints "<name>=refused" or "<name>=ESCAPED <what it got>", and the
 * small node programs that try the network from inside a sandbox.
 */
import type { LoggedRequest } from "./scripted-model.ts";

export type Call = { name: string; arguments: unknown };
export const bash = (command: string): Call => ({ name: "bash", arguments: { command } });
/** One word for sh, whatever it holds. */
export const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** The node that runs these tests, which the sandbox can read like every file of the root (the remote host's root is this one's). */
export const node = q(process.execPath);
/** A connection straight to host:port (argv[1], argv[2] or 127.0.0.1): exits 0 only if it was made. */
export const DIRECT = `require("net").connect(Number(process.argv[1]), process.argv[2] || "127.0.0.1").on("connect", () => process.exit(0)).on("error", () => process.exit(1))`;
/** A CONNECT through the sheep's proxy (HTTP_PROXY) to host:port (argv[1]): exits 0 only if the proxy opened the tunnel. */
export const CONNECT = `const u = new URL(process.env.HTTP_PROXY); require("http").request({ host: u.hostname, port: u.port, method: "CONNECT", path: process.argv[1] }).on("connect", (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on("error", () => process.exit(1)).end()`;
/** A plain HTTP GET of a URL (argv[1]) through the sheep's proxy: prints the body. */
export const FORWARD = `const u = new URL(process.env.HTTP_PROXY); require("http").get({ host: u.hostname, port: u.port, path: process.argv[1] }, (r) => { let b = ""; r.on("data", (d) => (b += d)); r.on("end", () => console.log(r.statusCode, b)); }).on("error", (e) => console.log("failed", e.message))`;

/** The variables a sandboxed sheep must never find in its environment. */
export const ENV_SECRETS = "env | grep -E '^(TMUX|TMUX_PANE|HERDR_[A-Z_]*|GITHUB_TOKEN|GH_TOKEN|AWS_[A-Z_]*|OPENAI_API_KEY|PI_SHEPHERD_TMUX_SOCKET)='";

/** One shell line per attempt (the command in parentheses); nothing of it may succeed. */
export const attempts = (a: Record<string, string>) =>
  `${Object.entries(a)
    .map(([name, cmd]) => `if out=$( (${cmd}) 2>&1 ); then echo "${name}=ESCAPED $out"; else echo "${name}=refused"; fi`)
    .join("\n")}\necho done`;

/** Writes that may land in a private place of the sandbox (its /tmp, the scratch over pi's agent dir): the host must not see them. */
export const unseen = (paths: string[]) => `${paths.map((p) => `echo x > ${q(p)} 2>/dev/null`).join("; ")}; true`;

/** What attempts' output says of each. */
export const verdicts = (text: string) => Object.fromEntries([...text.matchAll(/^([\w-]+)=(refused|ESCAPED)/gm)].map((m) => [m[1]!, m[2]!]));

/** The tool texts the model saw in the last request of this tag. */
export const toolTextsOf = (log: readonly LoggedRequest[], tag: string) => log.filter((l) => l.tag === tag).at(-1)?.toolTexts ?? [];

export interface EgressLine {
  target: string;
  verdict: string;
  reason?: string;
  bytesUp?: number;
  bytesDown?: number;
}

/** A sheep's egress.ndjson, parsed. */
export const egressLines = (text: string): EgressLine[] =>
  text
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as EgressLine);
