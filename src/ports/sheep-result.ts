/**
 * A result file's contents as the core may use them, wherever the file was read (this machine's
 * sheep-files port, or a host's agent whose answer came over the link): only the known fields, each of
 * its type and within its bound. The text is the sheep's answer, bounded by what a result file
 * may hold; a text past that is refused the way a local file past it is.
 */
import { fitsBytes, MAX_ERROR_CHARS, MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_RESULT_BYTES, stringOf, timeOf, usageOf } from "../domain/sheep-data.ts";
import { isWellFormedId } from "../domain/ids.ts";
import { spendFrom } from "../domain/budget.ts";
import type { SheepResult } from "./sheep-files.ts";

/** Steering messages one turn can have taken; the shepherd sends no more than its queue holds. */
const MAX_STEERED = 256;

export function sheepResultOf(v: unknown, promptId: string, now = Date.now()): SheepResult | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  const status = r.status === "completed" || r.status === "failed" || r.status === "cancelled" ? r.status : "failed";
  const text = typeof r.text === "string" ? r.text : "";
  if (!fitsBytes(text, MAX_RESULT_BYTES)) {
    return {
      promptId,
      status: "failed",
      text: "",
      refused: {
        code: "result_too_large",
        reason: `the sheep's answer is over ${MAX_RESULT_BYTES} bytes, more than a result may hold; the sheep's session file still holds its answer (action "read").`,
      },
    };
  }
  const opt = <T>(k: string, value: T | undefined) => (value === undefined ? {} : { [k]: value });
  const errorMessage = stringOf(r.errorMessage, MAX_ERROR_CHARS) ?? (status !== r.status ? "the sheep's result file named no status" : undefined);
  const steered = Array.isArray(r.steered)
    ? r.steered.filter((x): x is string => typeof x === "string" && isWellFormedId(x, "steer")).slice(0, MAX_STEERED)
    : undefined;
  return {
    promptId,
    status,
    text,
    ...opt("stopReason", stringOf(r.stopReason, MAX_NAME_CHARS)),
    ...opt("errorMessage", errorMessage),
    ...opt("usage", usageOf(r.usage)),
    ...opt("model", stringOf(r.model, MAX_NAME_CHARS)),
    ...opt("sessionPath", typeof r.sessionPath === "string" && r.sessionPath.length <= MAX_PATH_CHARS ? r.sessionPath : undefined),
    ...opt("startedAt", timeOf(r.startedAt, now)),
    ...opt("finishedAt", timeOf(r.finishedAt, now)),
    ...opt("steered", steered),
    ...opt("spent", spendFrom(r.spent)),
    ...opt("budgetExceeded", r.budgetExceeded === true ? (true as const) : undefined),
  };
}
