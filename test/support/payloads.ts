/**
 * The injection payloads every hostile-input test uses (the local e2e suite, the remote link's
 * quoting fuzz). Each payload touches its own marker (`<m>-<kind>`), so a leak names the field and
 * the form.
 */
export function shellPayloads(m: string): string[] {
  return [
    `$(touch ${m}-subst)`,
    "`touch " + m + "-backtick`",
    `; touch ${m}-semicolon`,
    `' ; touch ${m}-squote ; '`,
    `" ; touch ${m}-dquote ; "`,
    `\ntouch ${m}-newline\n`,
    `#(touch ${m}-tmux)`,
    `| touch ${m}-pipe &`,
    `&& touch ${m}-and`,
  ];
}

/** The payloads that fit in one file name (at most 255 bytes). */
export function nameSafePayload(m: string, newline = ""): string {
  return `$(touch ${m}-subst) \`touch ${m}-backtick\` ; touch ${m}-semicolon ' " ${newline}#(touch ${m}-tmux) | touch ${m}-pipe & ünï 🐑`;
}

export const UNICODE = "ünïcödé 🐑 中文 עברית \u202Ereversed\u202C e\u0301 \u200B";
