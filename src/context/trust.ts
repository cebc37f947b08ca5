import { ShepherdError } from "../domain/errors.ts";
import { printable } from "../domain/printable.ts";
import type { AgentDefinition } from "../ports/types.ts";
import { UNTRUSTED_HINT } from "../settings.ts";

export interface TrustContext {
  hasUI: boolean;
  confirm?: (title: string, message: string) => Promise<boolean>;
  /**
   * pi-shepherd's trust rule (src/project-trust.ts): true only when the person trusted the project
   * with /shepherd trust and pi does not refuse it. Absent, or anything but true: not trusted.
   */
  isProjectTrusted?: () => boolean;
  /** From the user's own settings, never from a project file. */
  allowWithoutUI: boolean;
  userConfirms: boolean;
}

/**
 * Project agents are repo-controlled: their body becomes a system prompt and their tool list
 * arms a model. They run only after the user agrees, naming the file.
 */
export async function approveDefinition(def: AgentDefinition, callConfirms: boolean, t: TrustContext): Promise<void> {
  if (def.source !== "project") return;
  if (t.isProjectTrusted?.() !== true) {
    throw new ShepherdError(
      "project_agent_refused",
      `project agent "${def.name}" (${def.path}) is refused: this project is not trusted by pi-shepherd (${UNTRUSTED_HINT}).`,
    );
  }
  // A model may ask to skip the question, but only the user's own settings can grant that.
  const mustConfirm = callConfirms || t.userConfirms;
  if (!mustConfirm) return;
  if (!t.hasUI || !t.confirm) {
    if (t.allowWithoutUI) return;
    throw new ShepherdError(
      "project_agent_refused",
      `project agent "${def.name}" (${def.path}) needs a confirmation and there is no UI to ask; set "allowProjectAgentsWithoutUI": true in your user settings to allow it.`,
    );
  }
  // The path is the repository's to name: drawn in the dialog, it is made printable first.
  const ok = await t.confirm(
    "Run a project agent?",
    printable(`Agent "${def.name}" comes from ${def.path}.\nProject agents are controlled by the repository: only continue if you trust it.`),
  );
  if (!ok) throw new ShepherdError("project_agent_refused", `project agent "${def.name}" (${def.path}) was not approved.`);
}
