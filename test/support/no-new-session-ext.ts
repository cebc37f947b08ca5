/**
 * Test-only extension for sheep: cancels every session switch, so a sheep's pi cannot start a new
 * session (a renewal fails as it would where pi refuses one) and the shepherd must close it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function noNewSession(pi: ExtensionAPI) {
  pi.on("session_before_switch", () => ({ cancel: true }));
}
