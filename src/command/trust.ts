/**
 * `/shepherd trust`: the person's explicit decision about a project's pi-shepherd files, asked in a
 * dialog that shows what those files would change. A person's act only: the model has no action
 * for it, so a repository's text cannot talk the model into trusting the repository.
 */
import { sep } from "node:path";
import { discoverAgents, type Discovery, PROJECT_PREFIX } from "../definitions/discover.ts";
import { ShepherdError } from "../domain/errors.ts";
import { printable } from "../domain/printable.ts";
import { projectTrust, recordTrustDecision, trustFilePath, type ProjectTrust } from "../project-trust.ts";
import { loadSettings, type LoadedSettings, SETTING_KEYS } from "../settings.ts";
import type { Notice } from "./run.ts";

export interface TrustDeps {
  agentDir: string;
  cwd: string;
  bundledDir: string;
  /** pi's own answer, where this pi has one. */
  pi?: boolean;
  hasUI: boolean;
  confirm(title: string, message: string): Promise<boolean>;
  now?: () => Date;
}

/** What the project's files would change if trusted: read as data, nothing of them is used. */
interface Preview {
  loaded: LoadedSettings;
  found: Discovery;
}

async function preview(d: TrustDeps): Promise<Preview> {
  const loaded = await loadSettings(d.agentDir, d.cwd, { projectTrusted: true });
  const found = await discoverAgents({ cwd: d.cwd, scope: "both", agentDir: d.agentDir, bundledDir: d.bundledDir, projectTrusted: true });
  return { loaded, found };
}

function previewLines({ loaded, found }: Preview): string[] {
  const lines: string[] = [];
  const file = loaded.paths.project;
  if (loaded.files.includes(file)) {
    const sets = SETTING_KEYS.filter((k) => loaded.origins[k] === "project").map((k) => `${k} ${JSON.stringify(loaded.settings[k])}`);
    lines.push(`Settings file ${file}: ${sets.length ? `would set ${sets.join(", ")}` : "would set nothing"}.`);
  }
  for (const p of loaded.problems.filter((x) => x.startsWith(`${file}: `))) lines.push(`  - ${p.slice(file.length + 2)}`);
  const inProject = (path: string) => found.projectDirs.some((dir) => path === dir || path.startsWith(`${dir}${sep}`));
  const agents = found.agents.filter((a) => a.source === "project");
  if (found.projectDirs.length) {
    lines.push(`Agent files (${found.projectDirs.join(", ")}): ${agents.length ? "" : "none usable"}`.trimEnd());
    for (const a of agents) {
      const renamed = a.name.startsWith(PROJECT_PREFIX) ? ` (not "${a.name.slice(PROJECT_PREFIX.length)}": yours or the bundled one keeps that name)` : "";
      lines.push(`  - ${a.name}${renamed}: ${a.path} [tools: ${a.tools?.join(", ") ?? "pi's default tools"}]`);
    }
    for (const s of found.skipped.filter((x) => inProject(x.path))) lines.push(`  - skipped ${s.path}: ${s.reason}`);
  }
  return lines;
}

function stateLine(t: ProjectTrust): string {
  return `Now: ${t.trusted ? "trusted" : "not trusted"}: ${t.reason}.`;
}

/** Runs `/shepherd trust`: shows the project's files, asks, records the answer either way. */
export async function trustCommand(d: TrustDeps): Promise<Notice[]> {
  const now = projectTrust({ agentDir: d.agentDir, cwd: d.cwd, ...(d.pi === undefined ? {} : { pi: d.pi }) });
  if (d.pi === false) {
    throw new ShepherdError(
      "trust_refused",
      `pi does not trust ${now.project}, and pi's answer comes first: trust it in pi (/trust, then restart pi), then run /shepherd trust again.`,
    );
  }
  const lines = previewLines(await preview(d));
  if (lines.length === 0) {
    // Nothing to ask about: no state line, whose "(/shepherd trust asks you)" would send the person round in a circle.
    const earlier = now.recorded ? ` Your earlier answer is kept: ${now.reason}.` : "";
    return [
      {
        level: "info",
        text: printable(
          `${now.project} has no pi-shepherd files (.pi/shepherd.json, .pi/agents, .agents/agents), so there is nothing to trust and nothing to decide.${earlier}`,
        ),
      },
    ];
  }
  const shown = printable(
    [
      `Project ${now.project}`,
      stateLine(now),
      "",
      ...lines,
      "",
      'Trusted, its agents can be started (with agentScope "project" or "both"; each start still asks you, naming the file)',
      "and its settings apply from the next start (/reload); user-only keys never do. These files are the repository's:",
      `only trust them if you trust it. Your answer is kept in ${trustFilePath(d.agentDir)}; /shepherd trust again changes it.`,
    ].join("\n"),
  );
  if (!d.hasUI) {
    throw new ShepherdError("trust_refused", `/shepherd trust asks you in a dialog, and this pi has no UI: run it in pi's interactive screen.\n${shown}`);
  }
  const yes = await d.confirm("Trust this project's pi-shepherd files?", shown);
  await recordTrustDecision(d.agentDir, d.cwd, yes ? "trusted" : "untrusted", d.now?.());
  const text = yes
    ? `pi-shepherd trusts ${now.project} now: its agents can be started (each asks first); its settings apply from the next start (/reload).`
    : `pi-shepherd does not trust ${now.project}: its .pi/shepherd.json and agent files are left out.`;
  return [{ level: "info", text: printable(text) }];
}
