/**
 * The sheep side on the remote host without anything done there by hand: the bundle's files
 * (src/remote/bundle.ts) in `<remote agentDir>/pi-shepherd/bin/<bundle hash>/`, dirs 0700 and
 * files 0600, each written to a temp name and renamed, and every file checked against its sha256
 * before the agent starts from them. A hash dir holds exactly one content, so a dir a running
 * sheep uses is never rewritten: missing files are added, a file that differs is refused. What is
 * there already counts only when it is ours: the ssh user's own dirs and plain files (a mode
 * looser than 0700/0600 is tightened; another owner, or a link, is refused).
 *
 * The remote side is a fixed node script (no text of ours or the person's inside it): the
 * agent dir and the hash are its arguments, the files come on stdin.
 */
import { createHash } from "node:crypto";
import { ShepherdError, shorten } from "../../domain/errors.ts";
import { oneLine } from "../../domain/labels.ts";
import { remoteLine } from "./quote.ts";

/** One file of the bundle (src/remote/bundle.ts's BundleFile). */
export interface DeployFile {
  name: string;
  content: Buffer | string;
  /** sha256 of content, hex. */
  sha256: string;
}

export interface DeployBundle {
  /** The directory's name (hex). */
  hash: string;
  files: readonly DeployFile[];
}

export interface Deployed {
  /** The remote agent dir, resolved there (the remote user's ~/.pi/agent when the host names none). */
  agentDir: string;
  /** `<agentDir>/pi-shepherd/bin/<hash>`. */
  dir: string;
  /** Names written this time (none when the dir was complete). */
  written: string[];
}

/** Runs one remote command line through the host's master, with stdin; resolves stdout or rejects with ssh's reason. */
export type RemoteExec = (line: string, stdin: string) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const HASH = /^[0-9a-f]{8,64}$/;

/**
 * The remote half. argv: mode ("check" | "write"), the agent dir ("" = ~/.pi/agent; "~/x" = under
 * the home), the hash. stdin: {files: [{name, sha256, content?: base64}]}. stdout: one JSON line.
 */
export const DEPLOY_SCRIPT = `
const fs = require("node:fs"), path = require("node:path"), os = require("node:os"), crypto = require("node:crypto");
const [mode, agentDirArg, hash] = process.argv.slice(1);
const out = (v) => process.stdout.write(JSON.stringify(v) + "\\n");
const sha = (b) => crypto.createHash("sha256").update(b).digest("hex");
function owned(p, dir) {
  const st = fs.lstatSync(p);
  if (dir ? !st.isDirectory() : !st.isFile()) throw new Error(p + " is not a " + (dir ? "directory" : "plain file") + " (a link is refused)");
  if (st.uid !== process.getuid()) throw new Error(p + " belongs to uid " + st.uid + ", not " + process.getuid());
  const want = dir ? 0o700 : 0o600;
  if ((st.mode & 0o777) !== want) fs.chmodSync(p, want);
}
function privateDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  owned(dir, true);
}
const exists = (p) => { try { fs.lstatSync(p); return true; } catch { return false; } };
function main(req) {
  const home = os.homedir();
  let agentDir = agentDirArg === "" ? path.join(home, ".pi", "agent") : agentDirArg.startsWith("~/") ? path.join(home, agentDirArg.slice(2)) : agentDirArg;
  if (!path.isAbsolute(agentDir)) throw new Error("the agent dir " + JSON.stringify(agentDirArg) + " is not an absolute path");
  const state = path.join(agentDir, "pi-shepherd"), bin = path.join(state, "bin"), dir = path.join(bin, hash);
  const missing = [];
  // What is there already is trusted only as ours: our uid, 0700 and 0600, no link in place of a file.
  for (const d of [state, bin, dir]) if (exists(d)) owned(d, true);
  for (const f of req.files) {
    const p = path.join(dir, f.name);
    if (!exists(p)) { missing.push(f.name); continue; }
    owned(p, false);
    const b = fs.readFileSync(p);
    if (sha(b) !== f.sha256) throw new Error(p + " differs from its hash; a bundle dir is never rewritten: remove " + dir + " once no sheep uses it");
  }
  if (mode === "check" || missing.length === 0) return out({ agentDir, dir, missing });
  fs.mkdirSync(agentDir, { recursive: true, mode: 0o700 });
  privateDir(state); privateDir(bin); privateDir(dir);
  for (const f of req.files) {
    if (!missing.includes(f.name)) continue;
    const b = Buffer.from(f.content, "base64");
    if (sha(b) !== f.sha256) throw new Error(f.name + " arrived damaged (its hash differs)");
    const tmp = path.join(dir, "." + f.name + "." + crypto.randomBytes(6).toString("hex") + ".tmp");
    try { fs.writeFileSync(tmp, b, { mode: 0o600, flag: "wx" }); fs.renameSync(tmp, path.join(dir, f.name)); }
    catch (e) { try { fs.unlinkSync(tmp); } catch {} throw e; }
  }
  out({ agentDir, dir, missing: [], written: missing });
}
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  try { main(JSON.parse(input)); } catch (e) { out({ error: String((e && e.message) || e) }); process.exitCode = 1; }
});
`;

function checkBundle(b: DeployBundle): void {
  if (!HASH.test(b.hash)) throw new ShepherdError("invalid_params", `the bundle's hash ${JSON.stringify(b.hash)} is not hex`);
  for (const f of b.files) {
    if (!NAME.test(f.name)) throw new ShepherdError("invalid_params", `the bundle file name ${JSON.stringify(f.name)} is not a plain file name`);
    if (createHash("sha256").update(f.content).digest("hex") !== f.sha256)
      throw new ShepherdError("invalid_params", `the bundle file ${f.name} differs from its hash`);
  }
}

async function run(exec: RemoteExec, node: string, mode: "check" | "write", agentDir: string, b: DeployBundle): Promise<Deployed & { missing: string[] }> {
  const files = b.files.map((f) => ({
    name: f.name,
    sha256: f.sha256,
    ...(mode === "write" ? { content: Buffer.from(f.content).toString("base64") } : {}),
  }));
  const r = await exec(remoteLine([node, "-e", DEPLOY_SCRIPT, mode, agentDir, b.hash]), JSON.stringify({ files }));
  const line = r.stdout.trim().split("\n").pop() ?? "";
  let answer: { agentDir?: string; dir?: string; missing?: string[]; written?: string[]; error?: string } = {};
  try {
    answer = JSON.parse(line);
  } catch {}
  if (answer.error !== undefined || typeof answer.dir !== "string") {
    const why = answer.error ?? (r.stderr.trim().split("\n").pop() || `exit ${r.exitCode}`);
    throw new ShepherdError(
      "start_failed",
      `deploying pi-shepherd's remote files failed: ${shorten(oneLine(why), 400)}. Check the host with action doctor (node there, the remote agent dir).`,
    );
  }
  return { agentDir: String(answer.agentDir), dir: answer.dir, missing: answer.missing ?? [], written: answer.written ?? [] };
}

/** The bundle's dir on the remote host, complete and checked: written only where files are missing. */
export async function deployBundle(exec: RemoteExec, o: { node: string; agentDir?: string; bundle: DeployBundle }): Promise<Deployed> {
  checkBundle(o.bundle);
  const agentDir = o.agentDir ?? "";
  const checked = await run(exec, o.node, "check", agentDir, o.bundle);
  if (checked.missing.length === 0) return { agentDir: checked.agentDir, dir: checked.dir, written: [] };
  const done = await run(exec, o.node, "write", agentDir, o.bundle);
  return { agentDir: done.agentDir, dir: done.dir, written: done.written };
}
