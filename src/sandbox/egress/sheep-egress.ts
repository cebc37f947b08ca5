/**
 * The egress of this machine's sandboxed sheep: one proxy, a socket per sheep in a directory of its
 * own that the sandbox binds (a directory, not the socket: a shepherd that reloads makes the socket
 * anew and the sheep, still running, finds it at the same place), and the policy from the sheep's
 * own model provider and the user's `allowNetwork`.
 */
import { join } from "node:path";
import { ShepherdError } from "../../domain/errors.ts";
import type { AuditInput } from "../../ports/audit.ts";
import { modelOf } from "../model-of.ts";
import { EGRESS_LOG_NAME, EGRESS_SOCKET_NAME } from "../policy.ts";
import type { EgressCounts } from "./log.ts";
import { egressPolicy } from "./policy.ts";
import { providerBaseUrls } from "./provider-hosts.ts";
import { EgressProxy, type EgressProxyOptions } from "./proxy.ts";

export interface SheepEgressOptions {
  agentDir: string;
  /** Where each sheep's socket directory is made (0700); keep it short: a socket path has ~107 bytes. */
  socketsDir: string;
  allowNetwork: readonly string[];
  audit?: (event: AuditInput) => void;
  proxy?: EgressProxyOptions;
}

export interface EgressRequest {
  agentId: string;
  /** The sheep's model as its start named it ("provider/id", or an id of pi's default provider). */
  model?: string;
  /** Where its log is written: a directory the sheep cannot reach, made by the caller. */
  logDir: string;
}

export class SheepEgress {
  private readonly proxy: EgressProxy;
  private readonly opening = new Map<string, Promise<string>>();

  constructor(private readonly o: SheepEgressOptions) {
    this.proxy = new EgressProxy({ ...o.proxy, ...(o.audit ? { audit: o.audit } : {}) });
  }

  /** The directory to bind into the sheep's sandbox, its socket served; the same while it stays open. */
  open(r: EgressRequest): Promise<string> {
    const had = this.opening.get(r.agentId);
    if (had) return had;
    const made = this.serve(r);
    this.opening.set(r.agentId, made);
    made.catch(() => this.opening.delete(r.agentId));
    return made;
  }

  async close(agentId: string): Promise<void> {
    this.opening.delete(agentId);
    await this.proxy.close(agentId);
  }

  async closeAll(): Promise<void> {
    this.opening.clear();
    await this.proxy.closeAll();
  }

  counts(agentId: string): EgressCounts | undefined {
    return this.proxy.logOf(agentId)?.counts();
  }

  private async serve(r: EgressRequest): Promise<string> {
    const { provider, id } = modelOf(r.model, this.o.agentDir);
    const urls = provider ? await providerBaseUrls(this.o.agentDir, provider, id) : [];
    // Never a guess: a sheep whose model cannot be placed would only meet refusals; say so at its start.
    if (urls.length === 0 && this.o.allowNetwork.length === 0) {
      throw new ShepherdError(
        "sandbox_unavailable",
        `cannot tell where the model ${r.model ?? "(pi's default)"} of a sandboxed sheep is served (provider ${provider ?? "unknown"}), so its sandbox would reach nothing; name the model as "provider/id", or add its host to the "sandbox.allowNetwork" setting.`,
      );
    }
    const dir = join(this.o.socketsDir, r.agentId);
    await this.proxy.open(r.agentId, {
      socketPath: join(dir, EGRESS_SOCKET_NAME),
      policy: egressPolicy(urls, this.o.allowNetwork),
      logFile: join(r.logDir, EGRESS_LOG_NAME),
    });
    return dir;
  }
}
