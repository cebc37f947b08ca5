/**
 * What the sheep's end needs of pi, and nothing more. Each shape is a part of pi's own extension
 * API, so extensions/sheep.ts hands pi's objects over as they are, and a test hands a fake.
 */

/** pi's extension API: a user message into the conversation, as pi would take it from a person. */
export interface SheepPi {
  sendUserMessage(text: string, options?: { deliverAs?: "steer" | "followUp"; expandPromptTemplates?: boolean }): void;
}

/** The session the sheep runs in (pi's ExtensionContext of `session_start`). */
export interface SheepSession {
  isIdle(): boolean;
  /** pi's own abort of the running turn, as Escape does. */
  abort(): void;
  readonly sessionManager: { getSessionFile(): string | undefined };
}

/** A command's context (pi's ExtensionCommandContext): the only one that may start a new session. */
export interface RenewContext {
  waitForIdle(): Promise<void>;
  newSession(options: { withSession: (fresh: Pick<SheepSession, "sessionManager">) => Promise<void> }): Promise<{ cancelled: boolean }>;
}

/** What pi's `ui_prompt_start` says of a dialog that waits for a person. */
export interface DialogEvent {
  title?: string;
  kind?: string;
}
