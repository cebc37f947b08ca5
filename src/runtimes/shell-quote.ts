/**
 * POSIX single-quoting of one word. Only used for the fixed launcher line, whose words are
 * absolute paths the package chose; quoting keeps even odd directory names inert.
 */
export function shellQuote(word: string): string {
  if (word.includes("\0")) throw new Error("a NUL byte cannot be passed to a shell");
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}
