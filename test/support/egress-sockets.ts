/** Real sockets for the egress tests: a target HTTP server, a raw CONNECT over a Unix socket, a plain request through one. */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  // Short: a Unix socket path has ~107 bytes.
  const dir = await mkdtemp(join(tmpdir(), "egr-"));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

/** An HTTP server on 127.0.0.1 answering `hello <path>` and echoing a request body; ends with the test. */
export async function targetServer(t: { after(fn: () => Promise<void>): void }): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const body = Buffer.concat(parts).toString();
      const text = body ? `echo ${body}` : `hello ${req.url}`;
      res.writeHead(200, { "content-type": "text/plain", "content-length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as AddressInfo).port, server };
}

/** Opens a CONNECT tunnel over the Unix socket; resolves to the status line's code and the socket (open when 200). */
export function connectTunnel(socketPath: string, target: string): Promise<{ status: number; head: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1] ?? 0);
      resolve({ status, head: buf.slice(0, end), socket });
    };
    socket.on("data", onData);
    socket.once("error", reject);
    // Closed before a whole status line: status 0, so a test fails on it instead of hanging.
    socket.once("close", () => resolve({ status: 0, head: buf, socket }));
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

/** A GET written into an open tunnel; resolves to the whole response text (the server closes). */
export function getThrough(socket: Socket, path: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.on("data", (d: Buffer) => {
      text += d.toString();
    });
    socket.once("close", () => resolve(text));
    socket.once("error", reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** A plain proxied request (absolute URI) over the Unix socket, or over a TCP port (the forwarder). */
export function plainRequest(
  via: { socketPath: string } | { port: number },
  url: string,
  body?: string,
): Promise<{ status: number; text: string; refused?: string }> {
  return new Promise((resolve, reject) => {
    const where = "socketPath" in via ? { socketPath: via.socketPath } : { host: "127.0.0.1", port: via.port };
    const req = request({ ...where, method: body ? "POST" : "GET", path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => {
        text += d.toString();
      });
      res.on("end", () => {
        const refused = res.headers["x-egress-refused"];
        resolve({ status: res.statusCode ?? 0, text, ...(typeof refused === "string" ? { refused } : {}) });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}
