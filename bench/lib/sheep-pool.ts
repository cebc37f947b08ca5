import type { AgentId } from "../../src/domain/ids.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Shepherd } from "../../src/core/shepherd.ts";
import type { AgentDefinition } from "../../src/ports/types.ts";
import { sheepDir } from "../../src/protocol/layout.ts";
import { untilGone } from "./files.ts";

/** Sheep started by one shepherd, with their pi pids so nothing outlives the bench. */
export class SheepPool {
  readonly ids: AgentId[] = [];
  readonly pids: number[] = [];

  constructor(
    private readonly shepherd: Shepherd,
    private readonly agentDir: string,
  ) {}

  async start(definition: AgentDefinition, cwd: string, label: string): Promise<string> {
    const s = await this.shepherd.start({ definition, cwd, label });
    this.ids.push(s.agentId);
    await this.track(s.agentId);
    return s.agentId;
  }

  /** Remembers the pi pid the sheep reported, for the final check. */
  async track(agentId: AgentId): Promise<void> {
    const status = JSON.parse(await readFile(join(sheepDir(this.agentDir, agentId), "status.json"), "utf8")) as { pid: number };
    this.pids.push(status.pid);
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.ids.map((id) => this.shepherd.close(id).catch(() => undefined)));
    await Promise.all(this.pids.map((pid) => untilGone(pid)));
  }
}
