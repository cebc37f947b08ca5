/**
 * A webhook for the `notify` setting's tests: a local HTTP server that keeps each POST's JSON body in
 * `posts`, in arrival order, and answers 204.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface WebhookReceiver<T> {
  /** The channel's url (`http://127.0.0.1:<port>/hook`). */
  url: string;
  posts: T[];
  close(): Promise<void>;
}

export async function webhookReceiver<T>(): Promise<WebhookReceiver<T>> {
  const posts: T[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      posts.push(JSON.parse(body) as T);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    posts,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
