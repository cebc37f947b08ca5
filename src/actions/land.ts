import { sheepCall } from "./call-text.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { ShepherdError } from "../domain/errors.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean, optionalString, requireString } from "./checks.ts";
import { landText } from "../texts/format.ts";

/** A commit message, not a document: git takes any length, the log shows it whole. */
const MAX_LAND_MESSAGE = 10_000;

export type LandCommand = { action: "land"; target: string; squash?: boolean; message?: string };

export const land = defineAction({
  name: "land",
  described: "land (merge an isolated sheep's work into your branch)",
  fields: fieldsOf("agentId", "squash", "message"),
  commands: [
    {
      name: "land",
      usage: "land <id|label> [--squash] [--message TEXT]",
      summary: "merge an isolated sheep's work into your current branch (only if your tree and the merge are clean)",
      switches: { squash: "squash" },
      flags: { message: "message" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId], flags) => ({ ...flags, action: "land", agentId }),
      first: "sheep",
    },
  ],
  renderCall: (args, t) => sheepCall(args, t),
  parse: (p): LandCommand => {
    const message = optionalString(p, "message");
    if (message !== undefined && (message.length > MAX_LAND_MESSAGE || message.includes("\0")))
      throw new ShepherdError("invalid_params", `land's "message" is a commit message of at most ${MAX_LAND_MESSAGE} characters, with no NUL.`);
    return defined<LandCommand>({ action: "land", target: requireString(p, "agentId", "land"), squash: optionalBoolean(p, "squash"), message });
  },
  run: async (cmd, { shepherd }) => {
    // A closed isolated sheep keeps its worktree: it can still be landed, by id or its last label.
    const landed = await shepherd.land(shepherd.registry.resolve(cmd.target, { closed: true }), {
      squash: cmd.squash === true,
      ...(cmd.message !== undefined ? { message: cmd.message } : {}),
    });
    return result("land", landText(landed), { landed });
  },
});
