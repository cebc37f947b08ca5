import { mkdtemp, mkdir, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * An isolated pi agent directory whose only model is the scripted one, with retries off so a
 * scripted failure comes back at once. `quietStartup: false` leaves pi's startup as a person sees it
 * (the bench measures that); tests keep it quiet. `packages` installs pi packages as `pi install`
 * would (the bench installs pi-shepherd so, then every pi of the agent dir loads it).
 */
export async function writeAgentDir(baseUrl: string, dir?: string, o: { quietStartup?: boolean; packages?: string[] } = {}): Promise<string> {
  const agentDir = dir ?? (await mkdtemp(join(tmpdir(), "pi-shepherd-agent-")));
  await mkdir(agentDir, { recursive: true, mode: 0o700 });
  await chmod(agentDir, 0o700);
  const models = {
    providers: {
      scripted: {
        baseUrl,
        api: "openai-completions",
        apiKey: "scripted-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "scripted-model", name: "Scripted Model", contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  };
  await writeFile(join(agentDir, "models.json"), JSON.stringify(models, null, 2), { mode: 0o600 });
  const settings = {
    defaultProvider: "scripted",
    defaultModel: "scripted-model",
    retry: { enabled: false },
    ...(o.quietStartup === false ? {} : { quietStartup: true }),
    ...(o.packages ? { packages: o.packages } : {}),
  };
  await writeFile(join(agentDir, "settings.json"), JSON.stringify(settings, null, 2), { mode: 0o600 });
  return agentDir;
}
