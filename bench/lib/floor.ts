/**
 * What pi itself costs before a first message reaches the model, with nothing of ours: pi as a
 * pane's own command in its interactive screen (what every sheep is), and pi --mode json -p (what
 * each task of the example subagent is). Both on the agent dir without pi-shepherd, with the
 * agent file's model, tools and prompt as arguments, the message as pi's own first message.
 * The difference is the least any sheep in a pane pays on top of the example, whoever starts it.
 */
import { execa } from "execa";
import { testNode, testPiCli } from "../../test/support/rpc-shepherd.ts";
import { directive } from "../../test/support/scripted-model.ts";
import { epochNow } from "./clock.ts";
import type { ModelProcess } from "./model.ts";
import type { RuntimeFixture } from "./runtime-fixture.ts";
import type { World } from "./world.ts";

export interface FloorSamples {
  /** From asking for the pane to the first message's request reaching the model. */
  interactiveMs: number[];
  /** From spawning the process to the same. */
  headlessMs: number[];
}

export async function measureFloor(fixture: RuntimeFixture, world: World, agentDir: string, model: ModelProcess, reps: number): Promise<FloorSamples> {
  const d = world.definition;
  const args = ["--no-session", "--model", d.model!, "--tools", d.tools!.join(","), "--append-system-prompt", d.systemPrompt ?? ""];
  const env = { PI_CODING_AGENT_DIR: agentDir };
  const out: FloorSamples = { interactiveMs: [], headlessMs: [] };
  const run = `floor-${process.hrtime.bigint()}`;
  for (let k = 0; k < reps; k++) {
    // Alternating which goes first cancels drift between the two of one repetition.
    const steps = [
      async () => {
        const tag = `${run}-i-${k}`;
        const began = epochNow();
        const pane = await fixture.bareLaunch("direct", [testNode, testPiCli, ...args, directive({ reply: tag, tag })], env, world.work);
        try {
          out.interactiveMs.push((await model.entry(tag)).receivedAt - began);
        } finally {
          await pane.kill();
        }
      },
      async () => {
        const tag = `${run}-h-${k}`;
        const began = epochNow();
        const child = execa(testNode, [testPiCli, "--mode", "json", "-p", ...args, directive({ reply: tag, tag })], {
          cwd: world.work,
          env: { ...world.env, ...env },
          extendEnv: false,
          stdin: "ignore",
          reject: false,
        });
        try {
          out.headlessMs.push((await model.entry(tag)).receivedAt - began);
        } finally {
          await child;
        }
      },
    ];
    if (k % 2 === 1) steps.reverse();
    for (const s of steps) await s();
  }
  return out;
}
