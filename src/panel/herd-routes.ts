/**
 * The herd's list with its filter (closed sheep too), the background delegations as groups, and
 * what the start form offers besides the agents (model aliases, hosts, placements).
 */
import { ACTION_FIELDS } from "../edge/command.ts";
import { LOCAL_HOST } from "../domain/hosts.ts";
import { herdFilter, panelDelegations } from "./history.ts";
import { onlyQuery, type RouteContext } from "./routes.ts";

/** GET /api/v1/sheep?state=live|closed|all|<state>&label=&agent=&host= */
export async function herdRoute(c: RouteContext): Promise<unknown> {
  // The day's budget of every shepherd of the user, where the setting has one (spec: Budgets).
  const day = await c.shepherd.spend.day().catch(() => undefined);
  return { ...c.feed.herd(herdFilter(c.query)), ...(day ? { budgetDay: day } : {}) };
}

export async function delegationsRoute(c: RouteContext): Promise<unknown> {
  onlyQuery(c.query, [], "GET /api/v1/delegations");
  return { delegations: panelDelegations(c.shepherd) };
}

/** What a start may name besides the agent: the user's model aliases, the hosts set up, where a pane goes. */
export async function startOptionsRoute(c: RouteContext): Promise<unknown> {
  onlyQuery(c.query, [], "GET /api/v1/start-options");
  const { settings } = await c.entry.context();
  const takesHost = ACTION_FIELDS.start.includes("host");
  return {
    models: Object.entries(settings.models).map(([alias, model]) => ({ alias, model })),
    hosts: [LOCAL_HOST, ...(takesHost ? Object.keys(settings.hosts).sort() : [])],
    placements: ["tab", "pane", "workspace"],
    directions: ["right", "down"],
  };
}
