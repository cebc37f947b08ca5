/**
 * The provider's base URLs as pi composes them, from a real models.json and pi-ai's real catalogue
 * (and a given one, to pin the order of precedence), into the policy's exact host:port entries.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { egressPolicy, listed } from "../../../src/sandbox/egress/policy.ts";
import { type BuiltinModels, piAiBuiltinModels, providerBaseUrls } from "../../../src/sandbox/egress/provider-hosts.ts";
import { tempDir } from "../../support/egress-sockets.ts";

const catalogue: BuiltinModels = async (p) =>
  p === "acme"
    ? [
        { id: "big", baseUrl: "https://api.acme.example/v1" },
        { id: "eu", baseUrl: "https://eu.acme.example/v1" },
      ]
    : [];

test("models.json's model, then its provider, then the built-in model decide the base URL", async (t) => {
  const dir = await tempDir(t);
  await writeFile(
    join(dir, "models.json"),
    JSON.stringify({
      providers: {
        scripted: { baseUrl: "http://127.0.0.1:4100/v1", api: "openai-completions", models: [{ id: "m1" }, { id: "m2", baseUrl: "http://127.0.0.1:4200/v1" }] },
        acme: { baseUrl: "https://gateway.corp.example/acme" },
        radiusco: { baseUrl: "https://login.example", oauth: "radius" },
      },
    }),
  );
  assert.deepEqual(await providerBaseUrls(dir, "scripted", "m1", catalogue), ["http://127.0.0.1:4100/v1"]);
  assert.deepEqual(await providerBaseUrls(dir, "scripted", "m2", catalogue), ["http://127.0.0.1:4200/v1"]);
  assert.deepEqual(await providerBaseUrls(dir, "scripted", undefined, catalogue), ["http://127.0.0.1:4100/v1", "http://127.0.0.1:4200/v1"]);
  // A built-in model under a provider baseUrl of models.json goes there instead.
  assert.deepEqual(await providerBaseUrls(dir, "acme", "eu", catalogue), ["https://gateway.corp.example/acme"]);
  // Unknown model or provider: nothing, never a guess.
  assert.deepEqual(await providerBaseUrls(dir, "scripted", "nope", catalogue), []);
  assert.deepEqual(await providerBaseUrls(dir, "nobody", "x", catalogue), []);
  const empty = await tempDir(t);
  assert.deepEqual(await providerBaseUrls(empty, "acme", "eu", catalogue), ["https://eu.acme.example/v1"]);
  const policy = egressPolicy(await providerBaseUrls(dir, "scripted", "m1", catalogue), []);
  assert.ok(listed(policy, "127.0.0.1", 4100));
  assert.ok(!listed(policy, "127.0.0.1", 4200));
});

test("pi-ai's own catalogue gives a built-in provider's URL (anthropic: api.anthropic.com:443)", async (t) => {
  const models = await piAiBuiltinModels("anthropic");
  assert.ok(models.length > 0);
  const dir = await tempDir(t);
  const urls = await providerBaseUrls(dir, "anthropic", models[0]!.id);
  assert.deepEqual(urls, ["https://api.anthropic.com"]);
  assert.ok(listed(egressPolicy(urls, []), "api.anthropic.com", 443));
  assert.deepEqual(await piAiBuiltinModels("../../etc/passwd"), []);
});
