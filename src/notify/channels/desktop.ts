/**
 * The desktop channel: `notify-send` with an argv (never a shell line) and a deadline. The title and
 * body come after `--`, so a label cannot be read as an option.
 */
import { execa } from "execa";
import type { Notice } from "../notice.ts";
import { SEND_DEADLINE_MS } from "../notifier.ts";

export function desktopArgv(n: Notice): string[] {
  const urgency = n.event === "question" || n.event === "blocked" ? "critical" : "normal";
  return ["--app-name=pi-shepherd", `--urgency=${urgency}`, "--", n.title, n.text];
}

export async function sendDesktop(n: Notice, env: NodeJS.ProcessEnv = process.env, command = "notify-send"): Promise<void> {
  try {
    await execa(command, desktopArgv(n), { env, timeout: SEND_DEADLINE_MS, stdin: "ignore", stdout: "ignore", stderr: "pipe", maxBuffer: 64 * 1024 });
  } catch (e) {
    const err = e as { shortMessage?: string; message: string };
    throw new Error(err.shortMessage ?? err.message);
  }
}
