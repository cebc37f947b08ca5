/**
 * The doctor's herdr check on each herdr version of FAKE_HERDR_VERSIONS: it names the binary's and the
 * server's version and protocol, and a server of another protocol fails with both and the fix.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { runtimeChecks } from "../../../src/doctor/runtime.ts";
import { createFakeHerdr, FAKE_HERDR_VERSIONS, type FakeHerdr } from "../../support/fake-herdr.ts";

const PROTOCOL: Record<string, number> = { "0.7.5": 17, "0.8.2": 20, "0.9.4": 22 };
const esc = (v: string) => v.replaceAll(".", "\\.");

for (const version of FAKE_HERDR_VERSIONS) {
  describe(`doctor: herdr ${version}`, () => {
    let fake: FakeHerdr;
    beforeEach(async () => {
      fake = await createFakeHerdr({ version });
    });
    afterEach(() => fake.cleanup());

    const herdrCheck = async () => {
      const { checks } = await runtimeChecks({ ...fake.env, PI_SHEPHERD_RUNTIME: "herdr", PI_SHEPHERD_HERDR_BIN: fake.bin }, "auto");
      return checks.find((c) => c.name === "herdr")!;
    };

    it("names the herdr version and protocol of the binary and of its server", async () => {
      const c = await herdrCheck();
      const p = PROTOCOL[version] ?? 22;
      assert.deepEqual([c.verdict, c.detail], ["pass", `herdr ${version} (protocol ${p}), its server ${version} (protocol ${p}) answers`]);
    });

    it("with no server outside herdr only warns: the first start runs one; inside herdr it fails", async () => {
      await fake.setDown(true);
      const c = await herdrCheck();
      assert.deepEqual(
        [c.verdict, c.detail],
        ["warn", `herdr ${version} (protocol ${PROTOCOL[version] ?? 22}), no herdr server runs; the first start runs \`herdr server\` for the sheep`],
      );
      const { checks } = await runtimeChecks({ ...fake.env, PI_SHEPHERD_RUNTIME: "herdr", PI_SHEPHERD_HERDR_BIN: fake.bin, HERDR_ENV: "1" }, "auto");
      assert.equal(checks.find((x) => x.name === "herdr")?.verdict, "fail");
    });

    it("fails on a server of another protocol, naming both versions and the fix", async () => {
      const other = version.startsWith("0.9.") ? "0.8.2" : "0.9.4";
      await fake.setServerVersion(other);
      const c = await herdrCheck();
      assert.equal(c.verdict, "fail");
      assert.match(
        c.detail,
        new RegExp(
          `is herdr ${esc(version)} \\(protocol ${PROTOCOL[version] ?? 22}\\), but the running herdr server is herdr ${esc(other)} \\(protocol ${PROTOCOL[other]}\\)`,
        ),
      );
      assert.match(c.fix ?? "", (PROTOCOL[version] ?? 22) < PROTOCOL[other]! ? /^Upgrade herdr to 0\.9\.4/ : /herdr server stop/);
    });
  });
}
