/**
 * Which edge the running action came from, without threading it through every call of the core:
 * the entry runs each command inside `actingFrom`, and whatever the core does for it (its audit
 * events, the prompts it records) reads `currentEdge`. Work nobody asked for (adopting, the warm
 * pool, the courier) runs outside any edge, or explicitly as the shepherd's own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Edge } from "../../ports/types.ts";

const scope = new AsyncLocalStorage<Edge>();

export function actingFrom<T>(edge: Edge, fn: () => T): T {
  return scope.run(edge, fn);
}

export function currentEdge(): Edge {
  return scope.getStore() ?? "shepherd";
}
