/**
 * Loaded with -e into every sheep (never into a shepherd): registers the sheep's end of the file
 * protocol (src/sheep/sheep-end.ts) with pi and forwards pi's events to it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { sheepLayout } from "../src/protocol/layout.ts";
import { herdrStateSink } from "../src/sheep/herdr-state.ts";
import { RENEW_COMMAND, SheepEnd } from "../src/sheep/sheep-end.ts";
import { registerMessageTool } from "./sheep-message.ts";

export default function sheep(pi: ExtensionAPI) {
  const dir = process.env.PI_SHEPHERD_SHEEP_DIR;
  if (!dir) return; // loaded somewhere that is not a sheep: stay inert
  const layout = sheepLayout(dir);
  const end = new SheepEnd(pi, layout, { herdr: (onOwnEvent) => herdrStateSink(process.env, pi.events, onOwnEvent) });

  pi.registerCommand(RENEW_COMMAND, {
    description: "pi-shepherd: a fresh conversation for the next task (sent by the shepherd only)",
    handler: (args, c) => end.renewCommand(args, c),
  });
  pi.on("input", (event) => ({ action: end.input(event.text) ? ("handled" as const) : ("continue" as const) }));
  registerMessageTool(pi, layout, end);

  pi.on("session_start", async (_event, c) => end.sessionStart(c));
  pi.on("session_shutdown", () => end.sessionShutdown());
  pi.on("message_end", (event) => end.messageEnd(event.message));
  pi.on("agent_start", () => end.agentStart());
  // agent_end can be followed by a retry or a queued follow-up; agent_settled (pi >= 1.x) says
  // the run is truly over. Older pi has no agent_settled, so agent_end falls back after a pause.
  pi.on("agent_end", () => end.agentEnd());
  pi.on("agent_settled" as "agent_end", () => end.agentSettled());
  pi.events.on("herdr:blocked", (data: unknown) => end.herdrBlocked(data));
  // pi before 1.6 never emits these names; registering a handler for them there is harmless.
  pi.on("ui_prompt_start", (event) => end.dialogStart(event));
  pi.on("ui_prompt_end", () => end.dialogEnd());
}
