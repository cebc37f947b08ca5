/** What the doctor says: one verdict per check, and for anything not passing, the fix in one line. */
export type Verdict = "pass" | "warn" | "fail";

export interface Check {
  /** Short and stable, e.g. "node", "runtime", "tmux", "orphan pane". */
  name: string;
  verdict: Verdict;
  /** What was found. */
  detail: string;
  /** The one thing to do about it; present whenever the verdict is not pass. */
  fix?: string;
}

export interface DoctorReport {
  checks: Check[];
  counts: Record<Verdict, number>;
}

export function report(checks: Check[]): DoctorReport {
  const counts: Record<Verdict, number> = { pass: 0, warn: 0, fail: 0 };
  for (const c of checks) counts[c.verdict]++;
  return { checks, counts };
}

export const pass = (name: string, detail: string): Check => ({ name, verdict: "pass", detail });
export const warn = (name: string, detail: string, fix: string): Check => ({ name, verdict: "warn", detail, fix });
export const fail = (name: string, detail: string, fix: string): Check => ({ name, verdict: "fail", detail, fix });
