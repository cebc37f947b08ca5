import matter from "gray-matter";

export type FrontMatter = { ok: true; data: Record<string, unknown>; content: string } | { ok: false; reason: string };

type Engine = { parse: (input: string) => object };
const registry = matter as unknown as { engines: Record<string, Engine> };

/**
 * gray-matter's own YAML engine (js-yaml's safe loader), taken when this module loads. Agent
 * files are repository content: the `javascript` engine beside it evals the block, so nothing
 * but this one may ever be reached.
 */
const YAML: Engine = { parse: registry.engines.yaml!.parse };

/** Every name gray-matter knows (with its aliases) and the usual add-ons; all refuse. */
const FOREIGN = ["javascript", "js", "coffee", "coffeescript", "cson", "json", "toml", "yml"];

const refusal = (name: string) =>
  `front matter language "${name.slice(0, 40)}" is not allowed: only YAML front matter is read, and this file was not evaluated`;

class Refused extends Error {}

function refusing(name: string): Engine {
  return {
    parse: () => {
      throw new Refused(refusal(name));
    },
  };
}

/** gray-matter's engine table for agent files: YAML, and a refusal under every other name it knows. */
export function yamlOnlyEngines(): Record<string, Engine> {
  // The global table can gain engines from any other code in the process: each becomes a refusal.
  const names = new Set([...FOREIGN, ...Object.keys(registry.engines)]);
  names.delete("yaml");
  return { ...Object.fromEntries([...names].map((n) => [n, refusing(n)])), yaml: YAML };
}

/**
 * The language named on the opening delimiter line (`---js`), read the way gray-matter reads it;
 * "" when none is named or there is no front matter at all.
 */
function openingLanguage(text: string): string {
  if (!text.startsWith("---") || text.charAt(3) === "-") return "";
  const end = text.search(/\r?\n/);
  return text.slice(3, end < 0 ? undefined : end).trim();
}

/**
 * Only YAML front matter is parsed. The language is checked before gray-matter sees the text,
 * and gray-matter gets engines where every other language throws, so neither path reaches eval.
 */
export function readFrontMatter(raw: string): FrontMatter {
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  const language = openingLanguage(text);
  if (language !== "" && language !== "yaml") return { ok: false, reason: refusal(language) };
  // gray-matter takes a line with no newline after it as one character shorter than it is; with
  // a newline both readings of the opening line agree.
  const input = text.includes("\n") ? text : `${text}\n`;
  try {
    // Options are always given: without them gray-matter answers from a process-wide cache keyed
    // by content, which any other caller can fill (with a failed parse or another engine's data).
    const parsed = matter(input, { language: "yaml", engines: yamlOnlyEngines() });
    const data: unknown = parsed.data;
    return { ok: true, data: data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : {}, content: parsed.content };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.message };
    return { ok: false, reason: `frontmatter is not valid YAML: ${(e as Error).message.split("\n")[0]}` };
  }
}
