/** A host's link as a person's news (issue 35): lost once until it is back, back only after lost. */
import assert from "node:assert/strict";
import { it } from "node:test";
import { hostNews } from "../../../src/remote/connect.ts";

it("a host lost is told once until it is back, and back only after it was lost", () => {
  const told: string[] = [];
  const news = hostNews((up, reason) => told.push(`${up ? "back" : "lost"}: ${reason}`));
  news({ status: "connecting" });
  news({ status: "up" });
  news({ status: "down", reason: "Connection refused" });
  news({ status: "down", reason: "Connection refused" });
  news({ status: "connecting" });
  news({ status: "up" });
  news({ status: "up" });
  assert.deepEqual(told, ["lost: Connection refused", "back: connected again"]);
});

it("a host that never answered is lost at the first try", () => {
  const told: boolean[] = [];
  const news = hostNews((up) => told.push(up));
  news({ status: "down", reason: "no route" });
  news({ status: "up" });
  assert.deepEqual(told, [false, true]);
});
