import type { Runtime, RuntimeName } from "../../ports/runtime.ts";
import type { SheepFiles } from "../../ports/sheep-files.ts";
import type { Workspace } from "../../ports/workspace.ts";
import type { RemoteCall } from "./call.ts";
import { RemoteRuntime } from "./remote-runtime.ts";
import { RemoteSheepFiles } from "./remote-sheep-files.ts";
import { RemoteWorkspace } from "./remote-workspace.ts";
import { ask } from "./wire/method.ts";
import { SYS_WIRE } from "./wire/sys.ts";

export interface RemotePortSet {
  runtime: Runtime;
  files: SheepFiles;
  workspace: Workspace;
  /** `sys.dir`: an existing directory there (relative: under the remote home; undefined: the home), else [cwd_invalid]. */
  dir(path: string | undefined): Promise<string>;
}

/**
 * A remote host's three ports over one connection. `runtime` is what its init answered, or a
 * function asked each time (a connection made lazily knows it only after init); a created pane
 * names the remote's multiplexer itself.
 */
export interface RemotePortOptions {
  host: string;
  runtime: RuntimeName | (() => RuntimeName);
  /** A created pane's attach hint as a line a person runs here (link/attach-hint.ts); absent: as it came. */
  attachHere?: (hint: string, runtime: RuntimeName) => string | undefined;
  /** How long a delivery or pane create lost on its way waits for the host to come back (default 30 s). */
  lostCallWaitMs?: number;
}

export function remotePorts(remote: RemoteCall, o: RemotePortOptions): RemotePortSet {
  return {
    runtime: new RemoteRuntime(remote, o.runtime, o.host, o.attachHere, o.lostCallWaitMs),
    files: new RemoteSheepFiles(remote, o.host, o.lostCallWaitMs),
    workspace: new RemoteWorkspace(remote, o.host),
    dir: (path) => ask<string, [string | null]>(remote, o.host, SYS_WIRE.dir, path ?? null),
  };
}
