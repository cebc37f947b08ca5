/**
 * Turns herdr's error envelopes into ShepherdErrors with our codes and a next step for
 * the user. The herdr code is kept so the adapter can treat "already gone" as success.
 */
import { type ErrorCode, ShepherdError } from "../../domain/errors.ts";
import { describeVersion } from "./version.ts";

export class HerdrCommandError extends ShepherdError {
  /** herdr's own code, e.g. `pane_not_found`; `usage` for exit 2, `unknown` for unparsed failures. */
  readonly herdrCode: string;
  constructor(code: ErrorCode, herdrCode: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.herdrCode = herdrCode;
  }
}

export function isHerdrCode(e: unknown, ...codes: string[]): e is HerdrCommandError {
  return e instanceof HerdrCommandError && codes.includes(e.herdrCode);
}

const TO_RUNTIME = "or set PI_SHEPHERD_RUNTIME=tmux to use tmux instead";

const MAPPING: Record<string, { code: ErrorCode; next: (bin: string) => string }> = {
  server_not_running: {
    code: "runtime_unavailable",
    next: () => `Start herdr (run \`herdr\`, or \`herdr server\` for a headless server), ${TO_RUNTIME}.`,
  },
  server_unavailable: {
    code: "runtime_unavailable",
    next: () => `Check that the herdr server is healthy (restart it with \`herdr server stop\` and \`herdr\`), ${TO_RUNTIME}.`,
  },
  protocol_mismatch: {
    code: "runtime_unavailable",
    next: (bin) =>
      `The herdr binary "${bin}" does not match the running server: point PI_SHEPHERD_HERDR_BIN at the binary the server runs, or restart the server with this binary (\`herdr server stop\`, then \`herdr\`).`,
  },
  pane_not_found: {
    code: "pane_gone",
    next: () => "The pane was closed; start a new agent.",
  },
  workspace_not_found: {
    code: "runtime_error",
    next: () => 'The herdr workspace no longer exists; use placement "workspace", or run pi in an open herdr workspace.',
  },
  tab_not_found: {
    code: "runtime_error",
    next: () => "The herdr tab no longer exists; start the agent again.",
  },
  pane_split_failed: {
    code: "runtime_error",
    next: () => 'herdr could not split the pane (too small?); use placement "tab" or "workspace".',
  },
  pane_send_failed: {
    code: "runtime_error",
    next: () => "herdr could not type into the pane; check that it still runs a shell, then start the agent again.",
  },
  confirmation_required: {
    code: "runtime_error",
    next: () => "herdr asks for a confirmation in its UI; answer it there, or close the pane in herdr.",
  },
  internal_error: {
    code: "runtime_error",
    next: () => "This is a herdr problem; retry, and if it persists look at herdr's log (HERDR_LOG=herdr=debug).",
  },
  timeout: {
    code: "runtime_error",
    next: () => "herdr did not finish in time; retry.",
  },
};

/** The error for a herdr error envelope `{code, message}` answered to `command` (e.g. "pane split"). */
export function herdrEnvelopeError(command: string, herdrCode: string, herdrMessage: string, bin: string): HerdrCommandError {
  const m = MAPPING[herdrCode];
  const next = m ? m.next(bin) : "Retry; if it persists, check the herdr server.";
  return new HerdrCommandError(m?.code ?? "runtime_error", herdrCode, `herdr ${command} failed: ${herdrCode}: ${herdrMessage}. ${next}`);
}

/** Exit 2: herdr rejected the command line itself, which points at a herdr version we do not speak. */
export function herdrUsageError(command: string, stderr: string, bin: string): HerdrCommandError {
  return new HerdrCommandError(
    "runtime_error",
    "usage",
    `herdr ${command} rejected its arguments: ${firstLine(stderr)}. pi-shepherd speaks the CLI of herdr 0.7.5 to 0.9.x; check \`${bin} --version\`.`,
  );
}

/**
 * A failure without an envelope. herdr before 0.8.0 printed a raw I/O error when no server
 * ran, so a refused or missing socket still gets the "start herdr" advice.
 */
export function herdrRawError(command: string, exitCode: number | undefined, stderr: string, bin: string): HerdrCommandError {
  const text = firstLine(stderr) || `exit code ${exitCode ?? "unknown"}`;
  if (/connection refused|no such file or directory|ConnectionRefused|NotFound/i.test(stderr)) {
    return new HerdrCommandError(
      "runtime_unavailable",
      "server_not_running",
      `herdr ${command} could not reach the herdr server: ${text}. ${MAPPING.server_not_running!.next(bin)}`,
    );
  }
  return new HerdrCommandError("runtime_error", "unknown", `herdr ${command} failed: ${text}.`);
}

export function herdrMissingError(bin: string, cause: unknown): HerdrCommandError {
  return new HerdrCommandError(
    "runtime_unavailable",
    "not_installed",
    `the herdr executable "${bin}" was not found. Install herdr (https://herdr.dev, e.g. \`curl -fsSL https://herdr.dev/install.sh | sh\`), set PI_SHEPHERD_HERDR_BIN to its path, ${TO_RUNTIME}.`,
    { cause },
  );
}

/**
 * The herdr on PATH and the running server speak different protocols, so herdr's CLI refuses every
 * command (`protocol_mismatch`): names both and the way out. Never "stop the server" to an older
 * client (#3747: that would end a newer server's panes for nothing); restarting is offered only to a
 * newer client, and it ends the server's panes.
 */
export function protocolMismatchError(
  bin: string,
  clientVersion: string,
  clientProtocol: number | undefined,
  serverVersion: string | undefined,
  serverProtocol: number | undefined,
): HerdrCommandError {
  const found = `the herdr on PATH ("${bin}") is ${describeVersion(clientVersion, clientProtocol)}, but the running herdr server is ${describeVersion(serverVersion, serverProtocol)}; herdr's CLI drives only a server of its own protocol`;
  const older = clientProtocol !== undefined && serverProtocol !== undefined ? clientProtocol < serverProtocol : undefined;
  const matching = `point PI_SHEPHERD_HERDR_BIN at the herdr ${serverVersion ?? ""} binary the server runs`.replace("  ", " ");
  const fix =
    older === true
      ? `Upgrade herdr to ${serverVersion ?? "the server's version"} (https://herdr.dev/install.sh, brew or mise), or ${matching}; the server can keep running`
      : older === false
        ? `${matching[0]!.toUpperCase()}${matching.slice(1)}, or restart the server with this herdr when its panes may end (\`herdr server stop\`, then \`herdr\`)`
        : `Run the herdr that matches the server: ${matching}`;
  return new HerdrCommandError("runtime_unavailable", "protocol_mismatch", `${found}. ${fix}, ${TO_RUNTIME}.`);
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.trim() ?? "";
}
