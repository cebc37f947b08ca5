/**
 * Runs the herdr CLI and reads its three output kinds: one JSON envelope line on stdout
 * (control commands), nothing (silent input commands), or raw text (reads). Failures
 * become ShepherdErrors; see errors.ts for the mapping.
 */
import { execa, ExecaError } from "execa";
import { ShepherdError } from "../../domain/errors.ts";
import { herdrEnvelopeError, herdrMissingError, herdrRawError, herdrUsageError, HerdrCommandError, protocolMismatchError } from "./errors.ts";
import { isRecord } from "../../domain/guards.ts";
import { parseServerStatus } from "./status.ts";
import { parseHerdrVersion, protocolOf } from "./version.ts";

export interface HerdrCliOptions {
  bin: string;
  /** The complete environment of each call: herdr finds its socket through it. */
  env: NodeJS.ProcessEnv;
  /** A hung server must not hang the shepherd; generous because waits are not run here. */
  timeoutMs?: number;
  /** Told of every failed command, e.g. so that a cached probe of the server is dropped. */
  onFailure?: (e: ShepherdError) => void;
}

export type HerdrResult = Record<string, unknown> & { type: string };

const DEFAULT_TIMEOUT_MS = 20_000;

/** The executable to run: an explicit option, then PI_SHEPHERD_HERDR_BIN, then `herdr` on PATH. */
export function resolveHerdrBin(env: NodeJS.ProcessEnv, bin?: string): string {
  return bin || env.PI_SHEPHERD_HERDR_BIN || "herdr";
}

export class HerdrCli {
  readonly bin: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #timeoutMs: number;
  readonly #onFailure: ((e: ShepherdError) => void) | undefined;

  constructor(opts: HerdrCliOptions) {
    this.bin = opts.bin;
    this.#env = opts.env;
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#onFailure = opts.onFailure;
  }

  /** A control command: returns `result` after checking that its `type` is the expected one. */
  async request(args: readonly string[], expectType: string): Promise<HerdrResult> {
    const stdout = await this.#run(args);
    const line = stdout.trim().split("\n").pop() ?? "";
    const result = parseEnvelope(line)?.result;
    if (!isRecord(result) || result.type !== expectType) {
      throw new HerdrCommandError(
        "runtime_error",
        "unexpected_output",
        `herdr ${label(args)} answered something other than "${expectType}": ${line.slice(0, 200) || "(nothing)"}. Check that herdr is 0.7.5 or newer (\`${this.bin} --version\`).`,
      );
    }
    return result as HerdrResult;
  }

  /** A command that prints nothing on success (`pane run`, `pane send-text`, …). */
  async silent(args: readonly string[]): Promise<void> {
    await this.#run(args);
  }

  /**
   * A read: herdr prints the raw text with no envelope and no added newline. With `maxBytes`, a
   * longer answer is cut off where it is read and refused, not held whole.
   */
  async text(args: readonly string[], maxBytes?: number): Promise<string> {
    const out = await this.#run(args, maxBytes);
    if (maxBytes !== undefined && Buffer.byteLength(out) > maxBytes) throw tooLong(label(args), maxBytes);
    return out;
  }

  async #run(args: readonly string[], maxBytes?: number): Promise<string> {
    try {
      return await this.#exec(args, maxBytes);
    } catch (e) {
      if (maxBytes !== undefined && e instanceof ExecaError && e.isMaxBuffer) throw tooLong(label(args), maxBytes);
      let failure = this.#failure(label(args), e);
      if (failure instanceof HerdrCommandError && failure.herdrCode === "protocol_mismatch") failure = await this.#mismatch(failure);
      this.#onFailure?.(failure);
      throw failure;
    }
  }

  async #exec(args: readonly string[], maxBytes?: number): Promise<string> {
    const r = await execa(this.bin, args, {
      env: this.#env,
      extendEnv: false,
      stdin: "ignore",
      stripFinalNewline: false,
      timeout: this.#timeoutMs,
      ...(maxBytes !== undefined ? { maxBuffer: { stdout: maxBytes } } : {}),
    });
    return r.stdout;
  }

  /**
   * herdr's own mismatch message names protocols only: the binary's version and the server's
   * (from `status server --json`, which the protocol guard does not stop) say which to upgrade.
   */
  async #mismatch(failure: HerdrCommandError): Promise<HerdrCommandError> {
    try {
      const client = parseHerdrVersion(await this.#exec(["--version"]));
      const server = parseServerStatus(await this.#exec(["status", "server", "--json"]));
      // A server that matches by now (restarted meanwhile) leaves herdr's own words.
      if (!client || !server?.running || server.compatible !== false) return failure;
      return protocolMismatchError(this.bin, client.text, protocolOf(client), server.version, server.protocol);
    } catch {
      return failure;
    }
  }

  #failure(command: string, e: unknown): ShepherdError {
    if (!(e instanceof ExecaError)) {
      return new ShepherdError("runtime_error", `herdr ${command} failed: ${String(e)}`, { cause: e });
    }
    if (e.code === "ENOENT" || e.code === "EACCES") return herdrMissingError(this.bin, e);
    if (e.timedOut) {
      return new HerdrCommandError(
        "runtime_error",
        "timeout",
        `herdr ${command} did not answer within ${Math.round(this.#timeoutMs / 1000)} s. Check that the herdr server is responsive, then retry.`,
        { cause: e },
      );
    }
    const stderr = typeof e.stderr === "string" ? e.stderr : "";
    if (e.exitCode === 2) return herdrUsageError(command, stderr, this.bin);
    const envelope = lastEnvelope(stderr);
    if (envelope) return herdrEnvelopeError(command, envelope.code, envelope.message, this.bin);
    return herdrRawError(command, e.exitCode, stderr, this.bin);
  }
}

function tooLong(command: string, maxBytes: number): HerdrCommandError {
  return new HerdrCommandError("runtime_error", "too_long", `herdr ${command} printed more than ${maxBytes} bytes; it is not shown.`);
}

/** Only the command words go into messages: later arguments may be user text. */
function label(args: readonly string[]): string {
  return args[0]?.startsWith("-") ? args[0] : args.slice(0, 2).join(" ");
}

function parseEnvelope(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function lastEnvelope(stderr: string): { code: string; message: string } | undefined {
  const lines = stderr.trim().split("\n").reverse();
  for (const line of lines) {
    const error = parseEnvelope(line.trim())?.error;
    if (isRecord(error) && typeof error.code === "string") {
      return { code: error.code, message: typeof error.message === "string" ? error.message : "" };
    }
  }
  return undefined;
}
