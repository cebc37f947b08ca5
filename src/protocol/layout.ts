import { basename, dirname, join } from "node:path";

/** Inbox files: `<16-digit sequence>-<id>.json`; the sequence orders them, the id is taken at most once. */
export const INBOX_FILE = /^(\d{16})-([psir]_[0-9a-z]{10})\.json$/;

/** Where each piece of a sheep's private directory lives; shared by shepherd and sheep. */
export function sheepLayout(dir: string) {
  return {
    dir,
    spec: join(dir, "spec.json"),
    inbox: join(dir, "inbox"),
    outbox: join(dir, "outbox"),
    /** One empty file per prompt or steer the sheep took: none is ever submitted twice. */
    taken: join(dir, "taken"),
    /** Replies of the shepherd to questions the sheep waits on. */
    replies: join(dir, "replies"),
    /** The sheep's messages to its shepherd, one JSON object a line, only ever appended to. */
    messages: join(dir, "messages.jsonl"),
    status: join(dir, "status.json"),
    exit: join(dir, "exit.json"),
    session: join(dir, "session.jsonl"),
    systemPrompt: join(dir, "system-prompt.md"),
    evidence: join(dir, "evidence"),
    evidenceFile: (promptId: string) => join(dir, "evidence", `${promptId}.patch`),
    /**
     * The card that resumes the sheep: the shepherd's, in `<stateDir>/cards/`, outside the sheep's
     * own directory (which the sheep writes): a card there would let a sheep pick its next
     * definition, tools, cwd and session.
     */
    resume: join(dirname(dirname(dir)), "cards", `${basename(dir)}.json`),
    inboxFile: (seq: string, id: string) => join(dir, "inbox", `${seq}-${id}.json`),
    outboxFile: (promptId: string) => join(dir, "outbox", `${promptId}.json`),
    takenFile: (id: string) => join(dir, "taken", id),
    replyFile: (messageId: string) => join(dir, "replies", `${messageId}.json`),
  };
}

export type SheepLayout = ReturnType<typeof sheepLayout>;

export function stateDir(agentDir: string): string {
  return join(agentDir, "pi-shepherd");
}

/** The shepherd's resume cards, one `<agentId>.json` per sheep it prepared (see sheepLayout's `resume`). */
export function cardsDir(agentDir: string): string {
  return join(stateDir(agentDir), "cards");
}

export function sheepDir(agentDir: string, agentId: string): string {
  return join(stateDir(agentDir), "sheep", agentId);
}

/**
 * Where the egress proxy logs what a sandboxed sheep tried to reach: in the shepherd's state, which the
 * sheep's sandbox hides, never in the sheep's own (writable) directory, so the sheep cannot change its log.
 */
export function egressLogDir(agentDir: string, agentId: string): string {
  return join(stateDir(agentDir), "egress-logs", agentId);
}

/** Worktrees of isolated sheep: private, and outside any checkout of the user's. */
export function worktreesDir(agentDir: string): string {
  return join(stateDir(agentDir), "worktrees");
}

/** The notices' outbox (`outbox/`, one private file per event) and the lock of the shepherd that sends them (src/notify). */
export function notifyDir(agentDir: string): string {
  return join(stateDir(agentDir), "notify");
}
