/** What the courier hands out: pushes into the conversation, and what it tells the person. */
import type { DelegateItem } from "../delegation/delegate.ts";
import type { DelegateMode, SheepMessage, WaitItem } from "../../ports/types.ts";

/** One task of a pushed background delegation: as a delegate result, with its prompt. */
export interface PushedItem extends DelegateItem {
  promptId?: string;
}

export type Push =
  | { kind: "result"; item: WaitItem; label: string; agent: string }
  | {
      kind: "question";
      agentId: string;
      label: string;
      agent: string;
      /** The first of them (what a push of one question always carried). */
      message: SheepMessage;
      /** The sheep's new questions, in the order asked, the first included (at most MAX_QUESTIONS_PER_PUSH); without it, `message` alone. */
      messages?: SheepMessage[];
      /** Questions of this sheep seen and not in this push: they come in a later one. */
      more?: number;
    }
  | { kind: "delegation"; delegationId: string; mode: DelegateMode; items: PushedItem[] };

/** A question push, as the conversation or the person gets it. */
export type QuestionPush = Extract<Push, { kind: "question" }>;

/** What the courier tells the person rather than the model. */
export type PersonNote =
  /** A person's prompt finished while nobody waited: its answer waits, unseen, for their next wait. */
  | { kind: "answered"; agentId: string; label: string; promptId: string; status: WaitItem["status"] }
  /** Questions of a sheep working on a person's prompt. */
  | QuestionPush;

export interface Notice {
  agentId: string;
  label: string;
  /** The latest progress or done message. */
  message: SheepMessage;
  /** Progress and done messages before it that are told only by this count. */
  more?: number;
}

/** Messages of a sheep that the rate limit holds back for now. */
export interface Held {
  agentId: string;
  label: string;
  count: number;
}

export interface CourierSink {
  /** Hands one push to the conversation; throws when it could not, and it is tried again later. */
  deliver(push: Push): void;
  /** Progress and done messages of a sheep, for the person. */
  notice?(notice: Notice): void;
  /** Messages of a sheep held back by the rate limit, for the person: one line. */
  held?(held: Held): void;
  /**
   * What is the person's, for the person (transcript, panel): throws when it could not, and it is
   * tried again later. Without it a person's prompt's questions go to the conversation.
   */
  person?(note: PersonNote): void;
}
