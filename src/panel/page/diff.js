/**
 * A prompt's evidence drawn per file: each file's status and counts, then its part of the patch
 * with every line a text node classed by what it is. The patch is git's (`diff-tree -p`, files in
 * the same order as the list); a file whose part is not in a truncated patch says so.
 */
import { asText, h } from "./dom.js";

const FILE_STATUSES = new Set(["added", "modified", "deleted", "typechange"]);

/**
 * The patch cut at each `diff --git` line: one part per file, in order. A file whose type changed
 * (a file made a symbolic link) is two parts in git's patch, a deletion and a creation under the
 * same header line, but one row of the list: taken as one part, or every later file would show
 * the hunks of the file before it and the last file's would be shown nowhere.
 */
export function splitPatch(patch) {
  const parts = [];
  let current;
  for (const line of asText(patch).split("\n")) {
    if (line.startsWith("diff --git ")) {
      if (current?.[0] === line) current.push(line);
      else {
        current = [line];
        parts.push(current);
      }
    } else if (current) current.push(line);
  }
  if (parts.length > 0) {
    const last = parts[parts.length - 1];
    while (last.length > 1 && last[last.length - 1] === "") last.pop();
  }
  return parts;
}

function lineClass(line) {
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+++") || line.startsWith("---")) return "meta";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith(" ")) return "ctx";
  if (line.startsWith("\\")) return "note";
  return "meta";
}

function fileBody(file, part) {
  if (file.binary) return h("p", { class: "muted" }, "Binary file: no lines to show.");
  if (!part) return h("p", { class: "muted" }, "Not in the patch shown (the patch was cut; the whole patch is in the sheep's evidence file).");
  // The header lines (diff --git, index, mode) say again what the file's row says: the hunks are what is read.
  const start = part.findIndex((l) => l.startsWith("@@"));
  if (start < 0) return h("p", { class: "muted" }, file.link !== undefined ? "A symbolic link." : "No line changed (mode or type only).");
  const pre = h("pre", { class: "patch", tabindex: "0", "aria-label": `changes of ${asText(file.path)}` });
  for (const line of part.slice(start)) pre.append(h("span", { class: `line ${lineClass(line)}` }, line), "\n");
  return pre;
}

export function renderDiff(diff) {
  const files = Array.isArray(diff?.files) ? diff.files : [];
  const parts = splitPatch(diff?.patch);
  const root = h("div", { class: "diff" });
  if (files.length === 0) {
    root.append(h("p", { class: "muted" }, "No file changed during this prompt."));
    return root;
  }
  const ins = files.reduce((n, f) => n + (Number(f.insertions) || 0), 0);
  const del = files.reduce((n, f) => n + (Number(f.deletions) || 0), 0);
  root.append(
    h(
      "p",
      { class: "diff-summary" },
      h("span", { class: "ins" }, `+${ins}`),
      " ",
      h("span", { class: "del" }, `−${del}`),
      ` in ${files.length} file${files.length === 1 ? "" : "s"}`,
      diff?.truncated ? " (patch cut)" : "",
    ),
  );
  files.forEach((file, i) => {
    const status = asText(file.status);
    const head = h(
      "header",
      { class: "file-head" },
      h("span", { class: FILE_STATUSES.has(status) ? `file-status fs-${status}` : "file-status" }, status || "changed"),
      " ",
      h("code", { class: "file-path" }, asText(file.path)),
      file.link !== undefined ? [" → ", h("code", { class: "muted link-target" }, asText(file.link))] : "",
      " ",
      file.binary
        ? h("span", { class: "muted" }, "binary")
        : [h("span", { class: "ins" }, `+${Number(file.insertions) || 0}`), " ", h("span", { class: "del" }, `−${Number(file.deletions) || 0}`)],
    );
    root.append(h("section", { class: "file", "data-path": asText(file.path) }, head, fileBody(file, parts[i])));
  });
  return root;
}
