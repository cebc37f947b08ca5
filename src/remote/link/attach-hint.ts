/**
 * A remote sheep's attach hint as a line a person runs on this machine. The host's text is never a
 * part of this machine's shell line: tmux's command goes to ssh as one single-quoted word, for the
 * shell there to read; herdr's hint is words to follow there, after the ssh line. A hint with a
 * control character is dropped.
 */
import type { RuntimeName } from "../../ports/runtime.ts";
import { shellLine } from "../../runtimes/shell-line.ts";

export function attachHintVia(target: { ssh: string; sshOptions?: readonly string[] }): (hint: string, runtime: RuntimeName) => string | undefined {
  const ssh = ["ssh", "-t", ...(target.sshOptions ?? []), "--", target.ssh];
  return (hint, runtime) => {
    if (/[\u0000-\u001f\u007f-\u009f]/.test(hint)) return undefined;
    return runtime === "tmux" ? shellLine([...ssh, hint]) : `${shellLine(ssh)}, then there: ${hint}`;
  };
}
