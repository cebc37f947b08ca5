import type { Runtime, RuntimeName } from "../ports/runtime.ts";
import { HerdrRuntime } from "./herdr/index.ts";
import { TmuxRuntime } from "./tmux/runtime.ts";

/** The adapter for a runtime name, configured from the environment (herdr's bin, tmux's socket). */
export function makeRuntime(name: RuntimeName, env: NodeJS.ProcessEnv): Runtime {
  return name === "herdr"
    ? new HerdrRuntime({ env })
    : new TmuxRuntime({ env, ...(env.PI_SHEPHERD_TMUX_SOCKET ? { socket: env.PI_SHEPHERD_TMUX_SOCKET } : {}) });
}
