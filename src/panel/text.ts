/** What `/shepherd panel` answers. */
import { errorText } from "../domain/errors.ts";

export function panelOnText(url: string, port: number, already: boolean): string {
  return [
    `${already ? "The panel is on" : "Panel on"}: ${url}`,
    `Open it in a browser on this machine; from another, forward the port first: ssh -L ${port}:127.0.0.1:${port} <this host>.`,
    "The token in the URL is the key to the herd: share it as you would this terminal. /shepherd panel off closes the port.",
  ].join("\n");
}

export function panelOffText(port: number | undefined): string {
  return port === undefined ? "The panel is off." : `Panel off: port ${port} on 127.0.0.1 is closed; the token of its URL is no longer valid.`;
}

export function panelUrlText(url: string | undefined): string {
  return url ?? "The panel is off; /shepherd panel on starts it.";
}

/** A reload could not bind the panel's port again: it is off, and nothing of its old URL or pages opens anything. */
export function panelLostText(port: number, failure: unknown): string {
  const taken = (failure as { cause?: { code?: unknown } } | undefined)?.cause?.code === "EADDRINUSE";
  return [
    taken
      ? `the panel is off: something else holds port ${port} on 127.0.0.1 (taken while pi reloaded), so the reloaded panel could not listen there.`
      : `the panel is off: it could not listen on 127.0.0.1:${port} again after the reload (${errorText(failure)}).`,
    "Its token and every page's session are let go, so whatever holds the port now got nothing that opens the herd.",
    "/shepherd panel on turns it on again with a new URL.",
  ].join(" ");
}

/**
 * The stable port was taken: by another of this user's shepherds (whose page lists this one), or by
 * something else (the kept sessions are let go). Either way this panel is on a free port for now.
 */
export function panelPortTakenText(stable: number, port: number, siblingPid?: number): string {
  if (siblingPid !== undefined) {
    return [
      `Port ${stable} (the panel's stable port) is held by your shepherd pi ${siblingPid}, so this panel is on ${port};`,
      `the page at ${stable} lists this shepherd and its sheep too, and this panel moves to ${stable} when that pi quits.`,
    ].join(" ");
  }
  return [
    `Port ${stable} on 127.0.0.1 (the panel's stable port for this user) is taken by another process, so this panel is on ${port} instead;`,
    "it stays there until a later start finds that port free.",
    "The kept token and page sessions were let go, since the page may have sent them to whatever holds that port.",
    'Set "panel": {"port": <another>} in your user settings for a fixed one.',
  ].join(" ");
}
