/**
 * THE one quoting of an argv for the remote host's shell. ssh does not carry an argv: it joins
 * its command words with spaces and the remote sshd hands that one line to the user's login shell
 * (`$SHELL -c line`). So every remote command we run is an argv of ours, each element
 * single-quoted here: inside '…' a POSIX shell (sh, dash, bash, ksh, zsh) gives no character a
 * meaning except the quote itself, written '\''. Nothing else may build a remote line.
 */
import { ShepherdError } from "../../domain/errors.ts";
import { shellQuote } from "../../runtimes/shell-line.ts";

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** One word for the remote shell. NUL cannot travel in a command line, and a lone surrogate would arrive as another text. */
export function remoteWord(arg: string): string {
  if (arg.includes("\u0000"))
    throw new ShepherdError("invalid_params", "a remote command argument contains a NUL byte; it cannot reach the remote host intact");
  if (LONE_SURROGATE.test(arg))
    throw new ShepherdError("invalid_params", "a remote command argument is not valid Unicode (a lone surrogate); it cannot reach the remote host intact");
  return shellQuote(arg);
}

/** The remote command line for an argv: what ssh is given as its one command word. */
export function remoteLine(argv: readonly string[]): string {
  if (argv.length === 0) throw new ShepherdError("invalid_params", "the remote command is empty");
  return argv.map(remoteWord).join(" ");
}
