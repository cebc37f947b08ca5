/** Merges computed in the object store alone (git merge-tree --write-tree): no working tree is touched. */
import { ShepherdError } from "../domain/errors.ts";
import { type Git, nulFields, objectId } from "./run.ts";

export async function treeOf(git: Git, repo: string, commit: string): Promise<string> {
  return objectId(await git.value(repo, ["rev-parse", "--verify", `${objectId(commit, "a commit")}^{tree}`]), "a tree");
}

export async function isAncestor(git: Git, repo: string, ancestor: string, of: string): Promise<boolean> {
  const r = await git.run(repo, ["merge-base", "--is-ancestor", objectId(ancestor, "a commit"), objectId(of, "a commit")], { ok: [1] });
  return r.exitCode === 0;
}

/** The branch's tip, or undefined when the branch is gone. */
export async function branchTip(git: Git, repo: string, branch: string): Promise<string | undefined> {
  const r = await git.run(repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], { ok: [1] });
  return r.exitCode === 0 ? objectId(r.stdout, "a branch tip") : undefined;
}

export type MergeOutcome = { tree: string } | { conflicts: string[] };

/** What merging theirs into ours would give; needs git 2.38 or later. */
export async function mergeTree(git: Git, repo: string, ours: string, theirs: string): Promise<MergeOutcome> {
  const args = ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", objectId(ours, "a commit"), objectId(theirs, "a commit")];
  const r = await git.run(repo, args, { ok: [1, 129] });
  if (r.exitCode === 129) throw new ShepherdError("git_error", "checking a merge without touching your files needs git 2.38 or later; update git.");
  const fields = nulFields(r.stdout);
  const tree = objectId(fields[0] ?? "", "the merged tree");
  if (r.exitCode === 0) return { tree };
  // Conflicted paths are listed once per conflict stage; the list ends at an empty field.
  const end = fields.indexOf("", 1);
  return { conflicts: [...new Set(fields.slice(1, end < 0 ? undefined : end))] };
}

/** Whether landing the branch would still change the user's HEAD. */
export async function landable(git: Git, repo: string, branch: string): Promise<boolean> {
  const tip = await branchTip(git, repo, branch);
  const head = tip ? await git.run(repo, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { ok: [1] }) : undefined;
  if (!tip || head?.exitCode !== 0) return false;
  const headId = objectId(head.stdout, "HEAD");
  if (await isAncestor(git, repo, tip, headId)) return false;
  const merged = await mergeTree(git, repo, headId, tip);
  return "conflicts" in merged || merged.tree !== (await treeOf(git, repo, headId));
}

/**
 * A commit object (no branch moves), with the message on stdin so no text of ours is ever an
 * argument. Without a configured identity, the shepherd signs as itself.
 */
export async function commitTree(git: Git, repo: string, tree: string, parents: readonly string[], message: string): Promise<string> {
  const ident = await git.run(repo, ["var", "GIT_COMMITTER_IDENT"], { ok: [128] });
  const config = ident.exitCode === 0 ? [] : ["user.name=pi-shepherd", "user.email=pi-shepherd@localhost"];
  const args = ["commit-tree", "--no-gpg-sign", objectId(tree, "a tree"), ...parents.flatMap((p) => ["-p", objectId(p, "a commit")])];
  return objectId(await git.value(repo, args, { input: `${message}\n`, config }), "the new commit");
}
