/**
 * --compare FILE: each figure of this run beside the same figure (same metric, via and runtime)
 * of an earlier run's JSON, with new / old. Rows the earlier run did not have show "-".
 */
import { readFile } from "node:fs/promises";
import { formatTable, type Row } from "./report.ts";
import { round } from "./stats.ts";

export async function compareTable(rows: Row[], names: string[], oldPath: string): Promise<string> {
  const old = JSON.parse(await readFile(oldPath, "utf8")) as { rows?: Row[]; generatedAt?: string };
  const before = new Map((old.rows ?? []).map((r) => [`${r.metric}\u0000${r.via}`, r]));
  const header = ["metric", "via", "runtime", "new", "old", "new/old"];
  const body: string[][] = [];
  for (const r of rows) {
    const o = before.get(`${r.metric}\u0000${r.via}`);
    for (const n of names) {
      const v = r.values[n];
      if (v === undefined) continue;
      const was = o?.values[n];
      const unit = (x: number | string | undefined) => (x === undefined ? "-" : typeof x === "number" && r.unit ? `${x} ${r.unit}` : String(x));
      const by = typeof v === "number" && typeof was === "number" && was !== 0 ? String(round(v / was, 3)) : "-";
      body.push([r.metric, r.via, n, unit(v), unit(was), by]);
    }
  }
  return `against ${oldPath}${old.generatedAt ? ` (${old.generatedAt})` : ""}:\n${formatTable(header, body)}`;
}
