import type { Runtime, RuntimeName } from "../../ports/runtime.ts";
import type { SheepHost } from "../../ports/sheep-host.ts";
import type { Workspace } from "../../ports/workspace.ts";
import type { RemoteCall } from "./call.ts";
import { RemoteRuntime } from "./remote-runtime.ts";
import { RemoteSheepHost } from "./remote-sheep-host.ts";
import { RemoteWorkspace } from "./remote-workspace.ts";

/** A remote host's three ports over one connection; `runtime` is what its init answered. */
export function remotePorts(remote: RemoteCall, o: { host: string; runtime: RuntimeName }): { runtime: Runtime; host: SheepHost; workspace: Workspace } {
  return {
    runtime: new RemoteRuntime(remote, o.runtime, o.host),
    host: new RemoteSheepHost(remote, o.host),
    workspace: new RemoteWorkspace(remote, o.host),
  };
}
