/** The panel of a bench's shepherd: turned on by `/shepherd panel on`, and its list timed as a program reads it. */
import { ask } from "../../test/support/panel-world.ts";
import type { RpcShepherd } from "../../test/support/rpc-shepherd.ts";

/** Turns the panel on and reads the port and token from the address it printed. */
export async function panelOn(shepherd: Pick<RpcShepherd, "slash">): Promise<{ port: number; token: string }> {
  const text = (await shepherd.slash("/shepherd panel on")).map((n) => n.text).join("\n");
  const url = /http:\/\/127\.0\.0\.1:(\d+)\/#token=([A-Za-z0-9_-]+)/.exec(text);
  if (!url) throw new Error(`/shepherd panel on printed no URL: ${text}`);
  return { port: Number(url[1]), token: url[2]! };
}

/** Whole `GET /api/v1/sheep` requests, the first five not counted, each checked to list `sheep` sheep; then the panel off. */
export async function timedSheepList(shepherd: Pick<RpcShepherd, "slash">, sheep: number, requests: number): Promise<number[]> {
  const { port, token } = await panelOn(shepherd);
  const headers = { authorization: `Bearer ${token}` };
  const listMs: number[] = [];
  for (let i = 0; i < requests + 5; i++) {
    const a = performance.now();
    const r = await ask(port, { path: "/api/v1/sheep", headers });
    if (i >= 5) listMs.push(performance.now() - a);
    if (r.status !== 200 || (r.json() as { sheep: unknown[] }).sheep.length !== sheep) throw new Error(`panel list: ${r.status} ${r.text.slice(0, 200)}`);
  }
  await shepherd.slash("/shepherd panel off");
  return listMs;
}
