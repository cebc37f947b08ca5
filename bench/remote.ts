/**
 * The rows of sheep on another machine (issue 24's Speed): each remote figure against the same
 * figure local in the same run, over the test remote host's link (bench/lib/remote-bench.ts).
 */
import type { RowMaker } from "./lib/row.ts";
import { median, ms, round } from "./lib/stats.ts";

export function remoteRows(row: RowMaker): void {
  const delta = (remote: number[], local: number[], extra = "") => {
    const [r, l] = [median(remote), median(local)];
    return { value: round(r - l, 1), detail: `remote ${ms(r)} / local ${ms(l)}, n ${remote.length}/${local.length}${extra}` };
  };
  row(
    "remote sheep: start tool call, cold, remote - local",
    "rpc",
    "ms",
    (r) => r.remote && delta(r.remote.remoteStartMs, r.remote.localStartMs, `; the host's first ${ms(r.remote.firstStartMs)}`),
    {
      text: "<= +250 ms",
      ok: (v) => v <= 250,
    },
  );
  row("remote sheep: prompt tool call, remote - local", "rpc", "ms", (r) => r.remote && delta(r.remote.remotePromptMs, r.remote.localPromptMs), {
    text: "<= +15 ms",
    ok: (v) => v <= 15,
  });
  row("remote sheep: answer -> wait, remote - local", "rpc", "ms", (r) => r.remote && delta(r.remote.remoteAnswerToWaitMs, r.remote.localAnswerToWaitMs), {
    text: "<= +15 ms",
    ok: (v) => v <= 15,
  });
  row(
    "remote sheep: one wait on busy remote sheep, CPU here (shepherd + ssh)",
    "rpc",
    "% core",
    (r) => {
      const o = r.remote?.overhead;
      if (!o) return undefined;
      const cpu = o.shepherdCpuMs + o.sshCpuMs;
      return {
        value: round((cpu / o.windowMs) * 100, 2),
        detail: `${o.sheep} sheep; shepherd ${ms(o.shepherdCpuMs)}, ssh ${ms(o.sshCpuMs)} in ${ms(o.windowMs)}`,
      };
    },
    { text: "<= 1 %", ok: (v) => v <= 1 },
  );
  row(
    "remote sheep: ssh connections to the host",
    "rpc",
    "",
    (r) => r.remote && { value: r.remote.connections, detail: `${r.remote.overhead.sheep} sheep busy` },
    {
      text: "= 1",
      ok: (v) => v === 1,
    },
  );
}
