import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import { FIELDS, stringEnum } from "../actions/fields.ts";
import type { ActionSpec } from "../actions/spec.ts";
import { ACTION_TABLE, type Action, actionNames } from "../actions/table.ts";

export type { Action };

/** Actions the tool offers today, from the action table; the enum lists only what works. */
export const ACTIONS: readonly Action[] = ACTION_TABLE.map((a) => a.name);

/**
 * The tool's parameters for a table of actions: one flat object, fields checked per action at run
 * time (edge/command.ts). Shared fields keep the order of actions/fields.ts; a field only a new
 * action knows comes after them.
 */
export function toolParameters(table: readonly ActionSpec[]): TObject {
  const properties: Record<string, TSchema> = { action: stringEnum(actionNames(table)) };
  const taken = (name: string) => table.some((a) => name in a.fields);
  for (const [name, schema] of Object.entries(FIELDS)) if (taken(name)) properties[name] = Type.Optional(schema);
  for (const a of table) {
    for (const [name, schema] of Object.entries(a.fields)) {
      if (!(name in properties)) properties[name] = Type.Optional(schema);
      else if (name in FIELDS && schema !== FIELDS[name as keyof typeof FIELDS]) {
        throw new Error(`action "${a.name}" describes the shared field "${name}" anew: take it from actions/fields.ts.`);
      }
    }
  }
  return Type.Object(properties);
}

export const shepherdParameters = toolParameters(ACTION_TABLE);

/** The names of the tool's parameters, or of those of one JSON type: one list for coercion and the fuzz test alike. */
export function parameterNames(type?: "array" | "boolean" | "number" | "string"): string[] {
  return Object.entries(shepherdParameters.properties)
    .filter(([, s]) => type === undefined || (s as { type?: string }).type === type)
    .map(([name]) => name);
}
