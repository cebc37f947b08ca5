/**
 * The work of an isolated sheep from the page: land, sync, resume and remove its worktree, each
 * the tool's own command (land, sync, start with resume, close with removeWorktree) through the
 * tool's entry, so its rules and `[code]`s are the tool's; and where its branch stands.
 */
import type { AgentId } from "../domain/ids.ts";
import { onlyKeys } from "./body.ts";
import { onlyQuery, type RouteContext, SHEEP_ROUTES, tool } from "./routes.ts";

type Handler = (c: RouteContext, id: AgentId) => Promise<unknown>;

/** Merge or squash the sheep's work into the branch checked out in its repository, with the person's own message if given. */
const landRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["squash", "message"], "POST …/land");
  return (await tool(c, { ...c.body, action: "land", agentId: id })).landed;
};

const syncRoute: Handler = async (c, id) => {
  onlyKeys(c.body, [], "POST …/sync");
  return (await tool(c, { action: "sync", agentId: id })).synced;
};

/** A new sheep on the old one's session file (the tool's start with resume): the answer is the new sheep. */
const resumeRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["label", "placement", "direction"], "POST …/resume");
  return (await tool(c, { ...c.body, action: "start", resume: id })).agent;
};

/** The tool's close with removeWorktree: on a closed sheep only its kept worktree goes; a live one is closed too. */
const removeWorktreeRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["force"], "POST …/remove-worktree");
  return (await tool(c, { ...c.body, action: "close", agentId: id, removeWorktree: true })).closed;
};

/** Ahead, behind, conflicts, landed: `known: false` where the sheep's machine cannot tell. */
const branchRoute: Handler = async (c, id) => {
  onlyQuery(c.query, [], "GET …/branch");
  const state = await c.shepherd.branchState(id);
  return state ? { known: true, ...state } : { known: false };
};

export const WORK_ROUTES: Record<string, Record<string, Handler>> = {
  GET: { branch: branchRoute },
  POST: { land: landRoute, sync: syncRoute, resume: resumeRoute, "remove-worktree": removeWorktreeRoute },
};

/** Every route under /api/v1/sheep/:id: the sheep's own and its work's. */
export function sheepRoutes(): Record<string, Record<string, Handler>> {
  const out: Record<string, Record<string, Handler>> = {};
  for (const table of [SHEEP_ROUTES, WORK_ROUTES]) {
    for (const [method, handlers] of Object.entries(table)) out[method] = { ...out[method], ...handlers };
  }
  return out;
}
