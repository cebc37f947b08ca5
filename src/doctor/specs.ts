/**
 * Launch specs no launcher read, of sheep no record knows: a shepherd killed between prepare and
 * the pane left one behind, forwarded secrets and all. This machine's are read from its files;
 * a host's come from the running shepherd, which asks the host's agent. Read only.
 */
import { STALE_SPEC_MS } from "../ports/sheep-files.ts";
import { join } from "node:path";
import { sheepLayout } from "../protocol/layout.ts";
import { specsOlderThan } from "../protocol/stale-specs.ts";
import { plain } from "./config.ts";
import { pass, warn, type Check } from "./types.ts";

const FIX = "/shepherd prune";

export async function specChecks(o: { stateDir: string; known: ReadonlySet<string> }): Promise<Check[]> {
  const stale = (await specsOlderThan(o.stateDir, STALE_SPEC_MS)).filter((id) => !o.known.has(id));
  if (stale.length === 0) return [pass("stale launch specs", "none")];
  return stale.map((id) =>
    warn(
      "stale launch spec",
      `${plain(sheepLayout(join(o.stateDir, "sheep", id)).spec)} of ${plain(id)}, which no record knows, was never read by a launcher (a start cut short); it holds the variables forwarded to the sheep`,
      FIX,
    ),
  );
}

/** A host's stale specs, as the running shepherd found them there (a host that did not answer tells of none). */
export function hostSpecChecks(host: string, ids: readonly string[]): Check[] {
  return ids.map((id) =>
    warn(
      `host ${host}: stale launch spec`,
      `the spec of ${plain(id)} there, which no record knows, was never read by a launcher (a start cut short); it holds the variables forwarded to the sheep`,
      FIX,
    ),
  );
}
