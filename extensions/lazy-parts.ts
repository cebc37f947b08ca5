/** The one way to the shepherd's working parts: imported once, on first need. */
import type * as Parts from "./shepherd-parts.ts";

let loading: Promise<typeof Parts> | undefined;

export function parts(): Promise<typeof Parts> {
  loading ??= import("./shepherd-parts.ts");
  return loading;
}
