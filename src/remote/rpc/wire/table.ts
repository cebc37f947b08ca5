/**
 * Every method the far end answers, by name, with the port whose table holds it: the one list the
 * far end routes by. Anything else is refused with protocol_error (a Map: no name of Object's
 * own, such as "constructor", is a method).
 */
import type { Runtime } from "../../../ports/runtime.ts";
import type { Workspace } from "../../../ports/workspace.ts";
import type { WireMethod } from "./method.ts";
import { RUNTIME_WIRE } from "./runtime.ts";
import { FILES_WIRE, type FilesSide } from "./sheep-files.ts";
import { SYS_WIRE, type SysSide } from "./sys.ts";
import { TERMINAL_WIRE, type TermSide } from "./terminal.ts";
import { WORKSPACE_WIRE } from "./workspace.ts";

/** What each port's methods are served on at the far end. */
export interface Sides {
  sys: SysSide;
  runtime: Runtime;
  files: FilesSide;
  ws: Workspace;
  term: TermSide;
}

export type PortName = keyof Sides;

// biome-ignore lint/suspicious/noExplicitAny: an entry of any table; its own types were checked where it was written
export type AnyMethod = WireMethod<any, any>;

export const WIRE = { sys: SYS_WIRE, runtime: RUNTIME_WIRE, files: FILES_WIRE, ws: WORKSPACE_WIRE, term: TERMINAL_WIRE } as const satisfies {
  // biome-ignore lint/suspicious/noExplicitAny: each entry's own parameters
  [K in PortName]: Record<string, WireMethod<Sides[K], any>>;
};

export const METHODS: ReadonlyMap<string, { port: PortName; method: AnyMethod }> = new Map(
  (Object.entries(WIRE) as [PortName, Record<string, AnyMethod>][]).flatMap(([port, table]) =>
    Object.values(table).map((method) => [method.name, { port, method }] as const),
  ),
);
