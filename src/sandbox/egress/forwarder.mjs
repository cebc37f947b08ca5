// The sandbox's end of the egress proxy: inside a sandbox with no network, a TCP port on the
// sandbox's own loopback whose every connection is piped to the proxy's Unix socket (bound into the
// sandbox). pi is told HTTP_PROXY/HTTPS_PROXY=http://127.0.0.1:<port>: it speaks HTTP proxy to this
// port, the proxy on the other end decides. It understands nothing itself, so it can allow nothing.
// Plain JS with node built-ins only: the launcher imports it without a loader.
import { connect, createServer } from "node:net";

/**
 * Listens on 127.0.0.1 (port 0: any free one) and pipes each connection to `socketPath`.
 * Resolves to { port, close }. The server does not hold the process open (pi's end ends it).
 */
export function startForwarder(socketPath, o = {}) {
  const server = createServer((client) => {
    const upstream = connect(socketPath);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on("error", () => {});
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: o.host ?? "127.0.0.1", port: o.port ?? 0 }, () => {
      server.off("error", reject);
      if (o.keepAlive !== true) server.unref();
      resolve({
        port: server.address().port,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

/** The environment pi gets: every proxy variable names the forwarder, NO_PROXY empty (loopback too goes through it). */
export function proxyEnv(port) {
  const url = `http://127.0.0.1:${port}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: "", no_proxy: "" };
}
