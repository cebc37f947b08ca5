/** The egress policy's spelling rules and address kinds, without sockets. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressListed, egressPolicy, listed, parseAllowEntry, pickAddress, riskyKind } from "../../../src/sandbox/egress/policy.ts";

test("allowNetwork entries: host, host:port, [v6]:port, addresses, *.domain; anything else is [invalid_params]", () => {
  assert.deepEqual(parseAllowEntry("Registry.NPMJS.org."), { host: "registry.npmjs.org", wildcard: false });
  assert.deepEqual(parseAllowEntry("pypi.org:443"), { host: "pypi.org", wildcard: false, port: 443 });
  assert.deepEqual(parseAllowEntry("*.example.com:8443"), { host: "example.com", wildcard: true, port: 8443 });
  assert.deepEqual(parseAllowEntry("[::1]:8080"), { host: "::1", wildcard: false, port: 8080 });
  assert.deepEqual(parseAllowEntry("fe80::1"), { host: "fe80::1", wildcard: false });
  for (const bad of ["", "a b", "host:0", "host:70000", "host:", "*.127.0.0.1", "http://x.com", "x.com/path", "*", "-x.com", "[::1", "a".repeat(300)]) {
    assert.throws(() => parseAllowEntry(bad), /\[invalid_params\]/, bad);
  }
});

test("a wildcard names subdomains only; a port-less entry any port; the provider's entry its exact port", () => {
  const p = egressPolicy(["https://api.acme.example/v1", "http://127.0.0.1:4100/v1"], ["*.example.com", "pypi.org"]);
  assert.ok(listed(p, "a.example.com", 443));
  assert.ok(listed(p, "A.B.EXAMPLE.COM.", 80));
  assert.ok(!listed(p, "example.com", 443));
  assert.ok(!listed(p, "evilexample.com", 443));
  assert.ok(listed(p, "pypi.org", 8080));
  assert.ok(listed(p, "api.acme.example", 443));
  assert.ok(!listed(p, "api.acme.example", 80));
  assert.ok(listed(p, "127.0.0.1", 4100));
  assert.ok(!listed(p, "127.0.0.2", 4100));
  // An address is matched by value, not by spelling.
  assert.ok(listed(egressPolicy([], ["::1"]), "0:0:0:0:0:0:0:1", 1));
});

test("risky address kinds, IPv4-mapped IPv6 included; an exactly listed address is taken", () => {
  assert.equal(riskyKind("127.0.0.53"), "loopback");
  assert.equal(riskyKind("::1"), "loopback");
  assert.equal(riskyKind("::ffff:127.0.0.1"), "loopback");
  assert.equal(riskyKind("169.254.10.1"), "link_local");
  assert.equal(riskyKind("fe80::1234"), "link_local");
  assert.equal(riskyKind("0.0.0.0"), "unspecified");
  assert.equal(riskyKind("::"), "unspecified");
  assert.equal(riskyKind("169.254.169.254"), "metadata");
  assert.equal(riskyKind("::ffff:169.254.169.254"), "metadata");
  assert.equal(riskyKind("fd00:ec2::254"), "metadata");
  assert.equal(riskyKind("93.184.215.14"), undefined);
  assert.equal(riskyKind("2606:2800:21f:cb07:6820:80da:af6b:8b2c"), undefined);
  const p = egressPolicy([], ["good.test", "127.0.0.1:8080"]);
  assert.deepEqual(pickAddress(p, ["127.0.0.1", "93.184.215.14"], 443), { address: "93.184.215.14" });
  assert.deepEqual(pickAddress(p, ["127.0.0.1"], 443), { reason: "loopback" });
  assert.deepEqual(pickAddress(p, ["127.0.0.1"], 8080), { address: "127.0.0.1" });
  assert.deepEqual(pickAddress(p, [], 443), { reason: "unresolved" });
  assert.ok(addressListed(p, "127.0.0.1", 8080));
  assert.ok(!addressListed(egressPolicy([], ["*.test"]), "127.0.0.1", 80));
});
