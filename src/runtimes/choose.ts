/**
 * Which multiplexer runs the sheep. An explicit choice is always honoured, even when that
 * runtime cannot work here: the adapter then reports why, instead of the shepherd quietly
 * using something the user did not ask for. Only "auto" looks around.
 */
import { ShepherdError } from "../domain/errors.ts";
import type { RuntimeName } from "../ports/runtime.ts";

export type RuntimeSetting = "auto" | RuntimeName;

export interface RuntimeProbes {
  /** A usable herdr server answers (see herdrServerAnswers). */
  herdrServerAnswers(): Promise<boolean>;
  tmuxInstalled(): Promise<boolean>;
}

export interface RuntimeChoiceInput {
  /** The `runtime` setting; PI_SHEPHERD_RUNTIME in `env` overrides it. */
  setting?: string;
  env: Readonly<Record<string, string | undefined>>;
  probes: RuntimeProbes;
}

const SETTINGS: readonly string[] = ["auto", "herdr", "tmux"];

export async function chooseRuntime(input: RuntimeChoiceInput): Promise<RuntimeName> {
  return (await explainRuntime(input)).runtime;
}

/** The runtime, and why it is the one: for the doctor, which tells a person the reason. */
export async function explainRuntime(input: RuntimeChoiceInput): Promise<{ runtime: RuntimeName; why: string }> {
  const fromEnv = input.env.PI_SHEPHERD_RUNTIME?.trim();
  const raw = fromEnv || input.setting?.trim() || "auto";
  const wanted = raw.toLowerCase();
  const source = fromEnv ? "PI_SHEPHERD_RUNTIME" : "the runtime setting";
  if (!SETTINGS.includes(wanted)) {
    throw new ShepherdError("invalid_params", `unknown runtime ${JSON.stringify(raw)} in ${source}; use auto, herdr or tmux`);
  }
  if (wanted === "herdr" || wanted === "tmux") return { runtime: wanted, why: `${source} asks for it` };

  // The multiplexer pi already runs in is the one the user is looking at.
  if (input.env.HERDR_ENV === "1") return { runtime: "herdr", why: "pi runs inside herdr (HERDR_ENV=1)" };
  if (input.env.TMUX) return { runtime: "tmux", why: "pi runs inside tmux ($TMUX is set)" };
  if (await probe(input.probes.herdrServerAnswers)) return { runtime: "herdr", why: "a herdr server answers" };
  if (await probe(input.probes.tmuxInstalled))
    return { runtime: "tmux", why: "no herdr server answers and tmux is installed (sheep go into a detached session)" };
  throw new ShepherdError(
    "runtime_unavailable",
    "pi-shepherd needs herdr or tmux to show its agents, and found neither: no herdr server answers and tmux is not installed. " +
      "Install one of them: herdr from https://herdr.dev (`curl -fsSL https://herdr.dev/install.sh | sh`, or a release binary from https://github.com/herdrdev/herdr/releases), then start it by running `herdr`; " +
      "or tmux (e.g. `apt-get install tmux` or `brew install tmux`).",
  );
}

/** A probe that fails to run has found nothing usable. */
async function probe(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}
