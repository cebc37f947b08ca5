/**
 * The scripted model in a process of its own, so the bench process (which hosts the shepherd
 * core) is charged only for the shepherd's CPU. Prints {"port"} once listening; its request
 * log is served at GET /log. Ends when its parent closes stdin or sends SIGTERM.
 */
import { startScriptedModel } from "../test/support/scripted-model.ts";

const model = await startScriptedModel();
process.stdout.write(JSON.stringify({ port: model.port, baseUrl: model.baseUrl }) + "\n");
const stop = () => void model.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
