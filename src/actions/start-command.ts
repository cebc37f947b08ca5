/** A start's command, checked from its raw fields: a new sheep from a definition, or a resume. */
import type { AgentScope } from "../definitions/discover.ts";
import { ShepherdError } from "../domain/errors.ts";
import type { Direction, Placement } from "../ports/runtime.ts";
import type { Budget } from "../domain/budget.ts";
import { budgetField, defined, optionalBoolean, optionalEnum, optionalString, requireString } from "./checks.ts";
import type { Params } from "./spec.ts";

const SCOPES = ["user", "project", "both"] as const;
const PLACEMENTS = ["tab", "pane", "workspace"] as const;
const DIRECTIONS = ["right", "down"] as const;

export type NewStartCommand = {
  action: "start";
  agent: string;
  label?: string;
  placement?: Placement;
  direction?: Direction;
  cwd?: string;
  host?: string;
  model?: string;
  agentScope?: AgentScope;
  confirmProjectAgents?: boolean;
  isolate?: boolean;
  sandbox?: boolean;
  budget?: Budget;
};

/** A start that continues a closed or exited sheep: its definition, cwd and model come back with it. */
export type ResumeCommand = {
  action: "start";
  resume: string;
  label?: string;
  placement?: Placement;
  direction?: Direction;
  confirmProjectAgents?: boolean;
  sandbox?: boolean;
  budget?: Budget;
};

export type StartCommand = NewStartCommand | ResumeCommand;

export function parseStart(p: Params): StartCommand {
  const resume = optionalString(p, "resume");
  if (resume !== undefined) return resumeCommand(p, resume);
  return defined<NewStartCommand>({
    action: "start",
    agent: requireString(p, "agent", "start"),
    label: optionalString(p, "label"),
    placement: optionalEnum(p, "placement", PLACEMENTS),
    direction: optionalEnum(p, "direction", DIRECTIONS),
    cwd: optionalString(p, "cwd"),
    host: optionalString(p, "host"),
    model: optionalString(p, "model"),
    agentScope: optionalEnum(p, "agentScope", SCOPES),
    confirmProjectAgents: optionalBoolean(p, "confirmProjectAgents"),
    isolate: optionalBoolean(p, "isolate"),
    sandbox: optionalBoolean(p, "sandbox"),
    budget: budgetField(p.budget, "start"),
  });
}

function resumeCommand(p: Params, resume: string): ResumeCommand {
  if (resume.trim() === "") throw new ShepherdError("invalid_params", '"resume" must name a sheep: its agentId or label.');
  for (const key of ["agent", "cwd", "host", "model", "agentScope", "isolate"]) {
    if (p[key] !== undefined) {
      throw new ShepherdError("invalid_params", `"resume" continues a sheep with its own agent definition, cwd and model; leave "${key}" out.`);
    }
  }
  return defined<ResumeCommand>({
    action: "start",
    resume: resume.trim(),
    label: optionalString(p, "label"),
    placement: optionalEnum(p, "placement", PLACEMENTS),
    direction: optionalEnum(p, "direction", DIRECTIONS),
    confirmProjectAgents: optionalBoolean(p, "confirmProjectAgents"),
    sandbox: optionalBoolean(p, "sandbox"),
    budget: budgetField(p.budget, "start"),
  });
}
