/** A bundle of one file, the link's stand-in agent (link-agent.mjs), hashed as src/remote/bundle.ts hashes. */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DeployBundle } from "../../src/remote/link/deploy.ts";

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

export async function linkBundle(extra = ""): Promise<DeployBundle> {
  const content = Buffer.from((await readFile(join(import.meta.dirname, "link-agent.mjs"), "utf8")) + extra);
  const files = [{ name: "agent.mjs", content, sha256: sha256(content) }];
  const hash = sha256(files.map((f) => `${f.name} ${f.sha256}\n`).join("")).slice(0, 16);
  return { hash, files };
}
