/** What `/shepherd panel` answers. */

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
