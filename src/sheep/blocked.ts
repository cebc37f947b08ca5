/**
 * Why a sheep waits, from its three sources. Two say it waits for a person: pi's own dialogs
 * (ui_prompt_start/end, pi >= 1.6, nested ones already merged into one span by pi) and other
 * extensions on the herdr:blocked bus. Each keeps its own state, so one dialog reported by both never
 * counts twice. The third is a shepherd_message question waiting for its reply: the sheep waits on
 * its shepherd.
 */
import type { DialogEvent } from "./pi-port.ts";

export interface Question {
  messageId: string;
  text: string;
}

export class Blocked {
  private dialog: string | undefined;
  private busCount = 0;
  private busLabel: string | undefined;
  /** The question waiting for its reply, if one does. */
  asking: Question | undefined;

  dialogStart(event: DialogEvent): void {
    const title = typeof event.title === "string" ? event.title.trim() : "";
    this.dialog = title || (event.kind ? `a ${event.kind} dialog` : "a dialog");
  }

  dialogEnd(): void {
    this.dialog = undefined;
  }

  /** A herdr:blocked event `{active, label}` of another extension; stray ends never count below zero. */
  bus(data: unknown): void {
    const d = (data ?? {}) as { active?: boolean; label?: string };
    if (d.active === false) this.busCount = Math.max(0, this.busCount - 1);
    else {
      this.busCount++;
      if (typeof d.label === "string") this.busLabel = d.label;
    }
    if (this.busCount === 0) this.busLabel = undefined;
  }

  /** What the sheep waits for, from any source: the open dialog first, as the person sees it. */
  label(): string | undefined {
    return this.dialog ?? (this.busCount > 0 ? (this.busLabel ?? "blocked") : this.askingLabel());
  }

  /** The same for the sources no herdr integration sees: pi's own dialogs, a question to the shepherd. */
  ownLabel(): string | undefined {
    return this.dialog ?? this.askingLabel();
  }

  private askingLabel(): string | undefined {
    return this.asking ? `question ${this.asking.messageId} to the shepherd: ${oneLine(this.asking.text)}` : undefined;
  }
}

/** A question's text in a one-line status label. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
