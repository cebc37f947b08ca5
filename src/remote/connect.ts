/**
 * A host of the `hosts` setting as the router needs it: its three ports over one RemoteSession
 * (one ssh connection, one channel to our agent there). Nothing connects until the first call;
 * the first connection is begun at once so that a start finds it warm.
 */
import type { RemotePorts } from "../hosts/table.ts";
import type { AuditInput } from "../ports/audit.ts";
import type { SandboxSettings } from "../sandbox/settings.ts";
import type { HostSettings } from "../settings.ts";
import { remoteBundle } from "./bundle.ts";
import { attachHintVia } from "./link/attach-hint.ts";
import { RemoteSession } from "./link/session.ts";
import { remotePorts } from "./rpc/ports.ts";

export interface ConnectOptions {
  /** This machine's state dir: the control socket goes under it. */
  localStateDir: string;
  env: NodeJS.ProcessEnv;
  /** PI_SHEPHERD_DEPTH the sheep there get. */
  depth: number;
  /** The user's `sandbox` setting: the host's sandboxed sheep run under the same policy as this machine's. */
  sandbox?: SandboxSettings;
  /** Where the host's egress refusals are told: this machine's audit log, as its own sandboxed sheep's. */
  audit?: (event: AuditInput) => void;
  /** Told when the host is lost (after it was up, or at the first try) and when it is back: the person's notice. */
  onHost?: (up: boolean, reason: string) => void;
}

export function connectRemote(name: string, h: HostSettings, o: ConnectOptions): RemotePorts {
  const session = new RemoteSession({
    host: {
      name,
      ssh: h.ssh,
      ...(h.sshOptions ? { sshOptions: h.sshOptions } : {}),
      ...(h.node ? { node: h.node } : {}),
      ...(h.agentDir ? { agentDir: h.agentDir } : {}),
    },
    localStateDir: o.localStateDir,
    env: o.env,
    bundle: remoteBundle,
    init: (deployed) => ({
      agentDir: deployed.agentDir,
      runtime: h.runtime ?? "auto",
      piCommand: h.piCommand ?? ["pi"],
      depth: o.depth,
      env: forwarded(h.forwardEnv ?? [], o.env),
      ...(o.sandbox ? { sandbox: o.sandbox } : {}),
    }),
  });
  // The remote's multiplexer is what its init answered (auto may pick either); before that, the setting's word.
  const ports = remotePorts(session, {
    host: name,
    runtime: () => session.initAnswer()?.runtime ?? (h.runtime === "herdr" ? "herdr" : "tmux"),
    attachHere: attachHintVia({ ssh: h.ssh, ...(h.sshOptions ? { sshOptions: h.sshOptions } : {}) }),
  });
  const audit = o.audit;
  if (audit) {
    session.onEvent((e) => {
      if (e.ev !== "egress-refusal") return;
      const { agentId, target, reason, error } = e;
      audit({ event: "refusal", action: "egress", host: name, agentId, reason, target, ...(error !== undefined ? { error } : {}) });
    });
  }
  if (o.onHost) session.onState(hostNews(o.onHost));
  void session.connect().catch(() => undefined); // a host that does not answer is told at its first call
  return {
    ...ports,
    down: () => {
      const st = session.state();
      return st.status === "down" ? { since: st.since.toISOString(), reason: st.reason } : undefined;
    },
    close: () => session.close(),
  };
}

/** A link's states as a person's news: only a change is, "lost" once until it is back, "back" only after a "lost". */
export function hostNews(onHost: (up: boolean, reason: string) => void): (st: { status: string; reason?: string }) => void {
  let told: "up" | "down" | undefined;
  return (st) => {
    if (st.status === "down" && told !== "down") {
      told = "down";
      onHost(false, st.reason ?? "not connected");
    } else if (st.status === "up") {
      if (told === "down") onHost(true, "connected again");
      told = "up";
    }
  };
}

/** The variables a host's sheep get from this machine: only those the person named. */
function forwarded(names: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = env[n];
    if (v !== undefined) out[n] = v;
  }
  return out;
}
