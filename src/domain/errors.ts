/** Stable error codes of the tool contract; messages always start with `[code]`. */
export type ErrorCode =
  | "invalid_params"
  | "unknown_definition"
  | "unknown_agent"
  | "ambiguous_label"
  | "unknown_prompt"
  | "agent_closed"
  | "prompt_pending"
  /** An interrupt of a sheep that runs no prompt now. */
  | "not_working"
  | "queue_full"
  | "unknown_message"
  | "reply_refused"
  | "not_owned"
  | "project_agent_refused"
  /** /shepherd trust could not ask: no UI, or pi refuses the project. */
  | "trust_refused"
  | "runtime_unavailable"
  | "start_failed"
  | "aborted"
  | "pane_gone"
  | "pi_exited"
  | "provider_error"
  | "runtime_error"
  | "delegate_failed"
  | "not_a_repository"
  | "git_error"
  | "dirty_worktree"
  | "land_refused"
  | "sync_refused"
  | "no_evidence"
  | "not_resumable"
  | "result_too_large"
  | "result_unreadable"
  | "messages_unreadable"
  /** A host name the `hosts` setting does not have. */
  | "host_unknown"
  /** A host of the `hosts` setting that ssh cannot reach now (ssh's reason and the fix follow), or whose agent's stream closed: nothing was done there, unless the words say the call was on its way. */
  | "host_unreachable"
  /** A start's cwd that is no directory on the sheep's host. */
  | "cwd_invalid"
  /** A remote host failed with an error that carried no code of ours. */
  | "remote_error"
  /** A line of the agent protocol that breaks its rules (not JSON, too long, an unknown method). */
  | "protocol_error"
  /** The panel could not listen on its port (taken, or not allowed). */
  | "panel_unavailable"
  /** A sandboxed sheep cannot start: bubblewrap or user namespaces are missing on its host (never run unsandboxed instead). */
  | "sandbox_unavailable"
  /** A start or delegation whose reservation does not fit the day's budget, or a sheep's turn stopped at its budget (spec: Budgets). */
  | "budget_exceeded";

export class ShepherdError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[${code}] ${message}`, options);
    this.code = code;
    this.name = "ShepherdError";
  }
}

export function isShepherdError(e: unknown, code?: ErrorCode): e is ShepherdError {
  return e instanceof ShepherdError && (code === undefined || e.code === code);
}

/** The text of any thrown value, keeping a `[code]` prefix when there is one. */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Error text short enough for one line of a log. */
export function shorten(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** How a process ended, for texts: "exit code 3", "signal SIGKILL". */
export function exitText(exit: { code: number | null; signal: string | null }): string {
  if (exit.code !== null) return `exit code ${exit.code}`;
  return exit.signal ? `signal ${exit.signal}` : "how is unknown: its process is gone";
}
