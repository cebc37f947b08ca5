/**
 * What the shepherd's session needs from pi and from the shepherd's lazily loaded parts, and
 * nothing more. Each shape is a part of pi's own extension API or of extensions/shepherd-parts.ts,
 * so extensions/shepherd-main.ts hands those over as they are, and a test hands fakes.
 */
import type { personNoteText } from "../command/person-text.ts";
import type { auditTrail, composeShepherd, doctor, processOwner, ShepherdApp } from "../compose.ts";
import type { DispatchContext } from "../context/context.ts";
import type { poolDefinitions } from "../context/definition-picker.ts";
import type { heldText, leftoverText, noticeText, reattachText } from "../texts/format.ts";
import type { PushMessage, pushMessage } from "../edge/push-text.ts";
import type { quitText } from "../texts/quit.ts";
import type { Notice } from "../notify/notice.ts";

/** The part of pi's context the session reads itself (pi's ExtensionContext); the rest passes through to the ports. */
export interface SessionContext {
  readonly cwd: string;
  readonly hasUI: boolean;
  readonly ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
}

/** pi's extension API: a message of the extension's own into the conversation. */
export interface ShepherdPi {
  sendMessage(message: PushMessage, options: { triggerTurn: boolean; deliverAs: "followUp" }): void;
}

/** The heavy half (extensions/shepherd-parts.ts), loaded on first need, never at pi's start. */
export interface SessionParts {
  composeShepherd: typeof composeShepherd;
  doctor: typeof doctor;
  auditTrail: typeof auditTrail;
  processOwner: typeof processOwner;
  reattachText: typeof reattachText;
  leftoverText: typeof leftoverText;
  noticeText: typeof noticeText;
  heldText: typeof heldText;
  personNoteText: typeof personNoteText;
  pushMessage: typeof pushMessage;
  poolDefinitions: typeof poolDefinitions;
  quitText: typeof quitText;
}

/** Time as the session sees it; a test swaps in its own. */
export interface SessionClock {
  now(): number;
  /** Resolves after ms; must not keep the process alive on its own. */
  sleep(ms: number): Promise<void>;
}

export interface SessionPorts<C extends SessionContext> {
  pi: ShepherdPi;
  parts(): Promise<SessionParts>;
  /** What every call into dispatch needs from the app and pi's context (extensions/pi-context.ts). */
  dispatchContext(app: ShepherdApp, ctx: C): DispatchContext;
  /** Whether the project's files apply, asked afresh each time. */
  projectTrusted(ctx: C): boolean;
  /** A line in the transcript, where /shepherd's answers stand. */
  transcript(ctx: C, text: string): void;
  /** The herd widget: redrawn after the herd changed, stopped when the session ends. */
  widget: { touch(ctx: C): void; stop(): void };
  /** The browser panel: on again when the session begins, its port closed when it ends. */
  panel: {
    resume(ctx: C): Promise<string | undefined>;
    shutdown(reason: string): Promise<void>;
    /** A notice of the `notify` setting's browser channel to the page; false while the panel is off. */
    notice?(n: Notice): boolean;
    /** The panel's page without its token, while it runs. */
    link?(): string | undefined;
  };
  /** Where the audit log is found (the agent dir). */
  env: NodeJS.ProcessEnv;
  /** Where a line goes when there is no UI to show it (pi's screen is stopped, or there never was one). */
  stderr(line: string): void;
  clock?: SessionClock;
  /** How long a full doctor waits for the session to begin; DOCTOR_SESSION_WAIT_MS unless a test says. */
  doctorWaitMs?: number;
}
