import { join } from "node:path";

/** Where each piece of a sheep's private directory lives; shared by shepherd and sheep. */
export function sheepLayout(dir: string) {
  return {
    dir,
    spec: join(dir, "spec.json"),
    inbox: join(dir, "inbox"),
    outbox: join(dir, "outbox"),
    status: join(dir, "status.json"),
    exit: join(dir, "exit.json"),
    session: join(dir, "session.jsonl"),
    systemPrompt: join(dir, "system-prompt.md"),
    evidence: join(dir, "evidence"),
    evidenceFile: (promptId: string) => join(dir, "evidence", `${promptId}.patch`),
    resume: join(dir, "resume.json"),
    inboxFile: (promptId: string) => join(dir, "inbox", `${promptId}.json`),
    outboxFile: (promptId: string) => join(dir, "outbox", `${promptId}.json`),
  };
}

export type SheepLayout = ReturnType<typeof sheepLayout>;

export function stateDir(agentDir: string): string {
  return join(agentDir, "pi-shepherd");
}

export function sheepDir(agentDir: string, agentId: string): string {
  return join(stateDir(agentDir), "sheep", agentId);
}

/** Worktrees of isolated sheep: private, and outside any checkout of the user's. */
export function worktreesDir(agentDir: string): string {
  return join(stateDir(agentDir), "worktrees");
}
