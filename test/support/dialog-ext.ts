/**
 * Test-only extension for sheep: a tool that asks the person at the pane a yes/no question and
 * waits for the answer, so a test can leave a sheep blocked on a real pi dialog.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "@sinclair/typebox";

export default function dialogExt(pi: ExtensionAPI) {
  pi.registerTool({
    name: "ask_person",
    label: "Ask person",
    description: "Asks the person at the terminal a yes/no question and returns the answer.",
    parameters: Type.Object({ question: Type.String() }),
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const yes = await ctx.ui.confirm(params.question, "Answer in this pane.");
      return { content: [{ type: "text", text: yes ? "the person said yes" : "the person said no" }], details: { yes } };
    },
  });
}
