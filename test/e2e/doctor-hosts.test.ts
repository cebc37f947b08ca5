/**
 * The doctor on each configured host, against the suite's remote host over real ssh: a good host
 * passes every check (host key, reachable, node, pi, multiplexer, state dir); each failure (an
 * unknown host key, no sshd answering, no node, no pi, no herdr for runtime herdr, a state dir
 * others may enter) fails with its fix; nothing is written there, and no payload of a setting runs.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { hostChecks, sshCommand } from "../../src/doctor/hosts.ts";
import { runDoctor } from "../../src/doctor/run.ts";
import type { Check } from "../../src/doctor/types.ts";
import { stateDir } from "../../src/protocol/layout.ts";
import type { HostSettings } from "../../src/settings.ts";
import { shellPayloads } from "../support/payloads.ts";
import { type RemoteHost, startRemoteHost } from "../support/remote-host.ts";

const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c]));

describe("doctor: hosts", { timeout: 300_000 }, () => {
  let r: RemoteHost;
  let dir: string;
  const settings = (o: Partial<HostSettings> = {}): HostSettings => ({ ...(r.hostSettings() as unknown as HostSettings), ...o });

  before(async () => {
    r = await startRemoteHost();
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-doctor-hosts-"));
  });
  after(async () => {
    await r?.end();
    await rm(dir, { recursive: true, force: true });
  });

  it("passes every check of a good host", async () => {
    const checks = await hostChecks({ box: settings() }, process.env, "settings.json");
    const c = byName(checks);
    for (const name of ["host key", "reachable", "node", "pi", "multiplexer", "state dir", "bubblewrap", "user namespaces", "egress proxy"]) {
      assert.equal(c[`host box: ${name}`]?.verdict, "pass", `${name}: ${JSON.stringify(c[`host box: ${name}`])}`);
    }
    assert.match(c["host box: node"]!.detail, /^Node v2\d\./);
    assert.match(c["host box: multiplexer"]!.detail, /tmux \d/);
    // bubblewrap made a sandbox there, in the remote host's namespaces.
    assert.match(c["host box: bubblewrap"]!.detail, /^bubblewrap at \/\S*bwrap makes a sandbox there \(default off\)/);
    assert.equal(checks.filter((x) => x.verdict !== "pass").length, 0, JSON.stringify(checks));
  });

  it("a host without bubblewrap, or whose bubblewrap cannot make a sandbox: a warning with the install line; a failure where the user's default is on", async () => {
    // No bwrap on the host's PATH: the same host, its PATH only a shell's tools (the probe's sh finds no bwrap).
    const fake = join(dir, "fake-bwrap");
    await mkdir(fake, { recursive: true });
    await writeFile(
      join(fake, "bwrap"),
      "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    const other = await startRemoteHost({ alias: "nsbox", pathFirst: fake });
    try {
      const hs = { ...(other.hostSettings() as unknown as HostSettings) };
      const warned = byName(await hostChecks({ box: hs }, process.env, "settings.json"));
      const b = warned["host box: bubblewrap"]!;
      assert.equal(b.verdict, "warn", JSON.stringify(b));
      assert.match(b.detail, /cannot make a sandbox there \(bwrap: No permissions to creating new namespace/);
      assert.match(b.fix!, /apt-get install bubblewrap/);
      assert.match(b.fix!, /unprivileged_userns_clone=1/);
      const failed = byName(await hostChecks({ box: hs }, process.env, "settings.json", { default: "on" }));
      assert.equal(failed["host box: bubblewrap"]?.verdict, "fail");
    } finally {
      await other.end();
    }
  });

  it("an unknown host key fails with the fix to check and accept it by hand, and is not accepted", async () => {
    const c = byName(await hostChecks({ box: settings({ ssh: r.unknownAlias }) }, process.env, "settings.json"));
    assert.equal(c["host box: host key"]?.verdict, "fail");
    assert.match(c["host box: host key"]!.fix!, new RegExp(`run \`ssh ${r.unknownAlias}\` once by hand to check the host key's fingerprint and accept it`));
    assert.equal(c["host box: reachable"]?.verdict, "fail");
    assert.match(c["host box: reachable"]!.detail, /Host key verification failed|host key is known/);
  });

  it("a host nobody answers on fails reachable with ssh's reason and the fix", async () => {
    const c = byName(await hostChecks({ box: settings({ sshOptions: ["-F", r.sshConfig, "-p", "1"] }) }, process.env, "settings.json"));
    assert.equal(c["host box: reachable"]?.verdict, "fail");
    assert.match(c["host box: reachable"]!.detail, /Connection refused/);
    assert.match(c["host box: reachable"]!.fix!, /is sshd running there, on that port\?/);
    assert.equal(c["host box: node"], undefined, "nothing more is asked of a host ssh does not reach");
  });

  it("no node, no pi, no herdr for runtime herdr: each fails with its fix", async () => {
    const c = byName(
      await hostChecks({ box: settings({ node: "/nonexistent/node", piCommand: ["/nonexistent/pi"], runtime: "herdr" }) }, process.env, "/x/settings.json"),
    );
    assert.equal(c["host box: node"]?.verdict, "fail");
    assert.match(c["host box: node"]!.fix!, /install Node 22\.19\.0 or newer there, or set "hosts"\."box"\."node" in \/x\/settings\.json/);
    assert.equal(c["host box: pi"]?.verdict, "fail");
    assert.match(c["host box: pi"]!.fix!, /install pi there .* or set "hosts"\."box"\."piCommand"/);
    assert.equal(c["host box: multiplexer"]?.verdict, "fail");
    assert.match(c["host box: multiplexer"]!.fix!, /install herdr there/);
  });

  it("a remote state dir others may enter fails with the chmod to run; payloads in the agent dir never run", async () => {
    const agentDir = join(r.home, `agent ${shellPayloads(join(r.home, "MARK-doctor"))[0]}`);
    await mkdir(r.hostPath(stateDir(agentDir)), { recursive: true, mode: 0o755 });
    const c = byName(await hostChecks({ box: settings({ agentDir }) }, process.env, "settings.json"));
    assert.equal(c["host box: state dir"]?.verdict, "fail", JSON.stringify(c["host box: state dir"]));
    assert.match(c["host box: state dir"]!.detail, /is mode 755 there; others may look in/);
    assert.equal(c["host box: state dir"]!.fix, sshCommand(r.alias, ["chmod", "700", stateDir(agentDir)]));
    assert.equal(sshCommand("box", ["chmod", "700", "/home/me/.pi/agent/pi-shepherd"]), "ssh box chmod 700 /home/me/.pi/agent/pi-shepherd");
    // Pasted into a shell, the quoted form reaches the remote shell as exactly the argv.
    const pasted = sshCommand("box", ["printf", "%s|", "a b", "$(x)", "it's"]).replace(/^ssh box /, "");
    assert.equal((await execa("sh", ["-c", `sh -c ${pasted}`])).stdout, "a b|$(x)|it's|");
    assert.deepEqual(
      (await readdir(r.hostPath(r.home))).filter((n) => n.startsWith("MARK")),
      [],
      "no payload reached a shell",
    );
    assert.deepEqual(await readdir(r.hostPath(stateDir(agentDir))), [], "the doctor wrote nothing there");
  });

  it("runDoctor checks the hosts of the user's settings", async () => {
    const agentDir = join(dir, "agent");
    await mkdir(stateDir(agentDir), { recursive: true, mode: 0o700 });
    await writeFile(join(stateDir(agentDir), "settings.json"), JSON.stringify({ hosts: { box: r.hostSettings() } }), { mode: 0o600 });
    const report = await runDoctor({ env: process.env, cwd: dir, agentDir, bundledDir: join(dir, "none"), ownerAlive: () => false });
    assert.equal(
      report.checks.find((c) => c.name === "host box: reachable")?.verdict,
      "pass",
      JSON.stringify(report.checks.filter((c) => c.name.startsWith("host"))),
    );
  });
});
