import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { completeShepherdArgs, type CompletionSources } from "../../../src/command/complete.ts";
import { commandDescription, parseShepherdCommand, SUBCOMMANDS, subcommandNames } from "../../../src/command/parse.ts";
import { quoteWord, tokenize } from "../../../src/command/tokens.ts";
import { parseToolCommand } from "../../../src/edge/command.ts";

describe("/shepherd arguments: words", () => {
  it("splits on whitespace and keeps quoted words whole", () => {
    assert.deepEqual(
      tokenize(`  start  scout --label "my sheep" --cwd 'a b/c' x\\ y "q\\"uote" `).map((t) => t.text),
      ["start", "scout", "--label", "my sheep", "--cwd", "a b/c", "x y", 'q"uote'],
    );
    assert.deepEqual(tokenize(""), []);
    assert.throws(() => tokenize('read "open'), /^ShepherdError: \[invalid_params\] unterminated " quote/);
    assert.deepEqual(
      tokenize('read "open', true).map((t) => t.text),
      ["read", "open"],
    );
  });

  it("quotes a word so that it reads back the same", () => {
    for (const w of ["plain", "with space", 'dq"', "back\\slash", "it's", ""]) {
      assert.deepEqual(
        tokenize(quoteWord(w)).map((t) => t.text),
        [w],
        w,
      );
    }
    assert.equal(quoteWord("scout"), "scout");
  });
});

describe("/shepherd arguments: subcommands", () => {
  it("interrupt takes one sheep and is the tool's interrupt", () => {
    assert.deepEqual(parseShepherdCommand("interrupt recon"), { sub: "interrupt", command: { action: "interrupt", target: "recon" } });
    assert.throws(() => parseShepherdCommand("interrupt"), /"interrupt" needs a sheep's id or label\. Usage: \/shepherd interrupt <id\|label>/);
  });

  it("panel takes on, off, url or nothing (then: url when on, else on)", () => {
    assert.deepEqual(parseShepherdCommand("panel"), { sub: "panel" });
    for (const mode of ["on", "off", "url"]) assert.deepEqual(parseShepherdCommand(`panel ${mode}`), { sub: "panel", mode });
    assert.throws(
      () => parseShepherdCommand("panel open"),
      /^ShepherdError: \[invalid_params\] "open" is not one of on, off, url\. Usage: \/shepherd panel \[on\|off\|url\]/,
    );
    assert.throws(() => parseShepherdCommand("panel on now"), /unexpected "now"/);
  });

  it("no argument is the overview; help and settings take nothing", () => {
    assert.deepEqual(parseShepherdCommand(""), { sub: "overview" });
    assert.deepEqual(parseShepherdCommand("   "), { sub: "overview" });
    assert.deepEqual(parseShepherdCommand("help"), { sub: "help" });
    assert.deepEqual(parseShepherdCommand("settings"), { sub: "settings" });
    assert.throws(() => parseShepherdCommand("settings now"), /^ShepherdError: \[invalid_params\] unexpected "now"\. Usage: \/shepherd settings/);
  });

  it("maps each subcommand to the tool's parameters", () => {
    assert.deepEqual(parseShepherdCommand("sheep"), { sub: "sheep", command: { action: "sheep" } });
    assert.deepEqual(parseShepherdCommand("sheep both"), { sub: "sheep", command: { action: "sheep", agentScope: "both" } });
    assert.deepEqual(parseShepherdCommand("agents project"), { sub: "sheep", command: { action: "sheep", agentScope: "project" } }, "agents is an alias");
    assert.deepEqual(parseShepherdCommand("herd"), { sub: "herd", command: { action: "herd" } });
    assert.deepEqual(parseShepherdCommand("prune"), { sub: "prune", command: { action: "prune" } });
    assert.deepEqual(parseShepherdCommand("prune --force"), { sub: "prune", command: { action: "prune", force: true } });
    assert.deepEqual(parseShepherdCommand("land scout --squash --message 'One line'"), {
      sub: "land",
      command: { action: "land", target: "scout", squash: true, message: "One line" },
    });
    assert.deepEqual(parseShepherdCommand('start scout --label "recon one" --placement=pane --direction down --cwd ../x --scope both --model m/x'), {
      sub: "start",
      command: { action: "start", agent: "scout", label: "recon one", placement: "pane", direction: "down", cwd: "../x", agentScope: "both", model: "m/x" },
    });
    assert.deepEqual(
      parseShepherdCommand("start --label r scout"),
      { sub: "start", command: { action: "start", agent: "scout", label: "r" } },
      "flags go anywhere",
    );
    assert.deepEqual(parseShepherdCommand("read recon --lines 5"), { sub: "read", command: { action: "read", target: "recon", source: "session", lines: 5 } });
    assert.deepEqual(parseShepherdCommand("read recon --turns 2"), { sub: "read", command: { action: "read", target: "recon", source: "session", turns: 2 } });
    assert.deepEqual(parseShepherdCommand("read recon --source screen"), { sub: "read", command: { action: "read", target: "recon", source: "screen" } });
    assert.deepEqual(parseShepherdCommand('status "recon one"'), { sub: "status", command: { action: "status", target: "recon one" } });
    assert.deepEqual(parseShepherdCommand("close a_0123456789"), { sub: "close", command: { action: "close", target: "a_0123456789" } });
    assert.deepEqual(parseShepherdCommand("close recon --remove-worktree --force"), {
      sub: "close",
      command: { action: "close", target: "recon", removeWorktree: true, force: true },
    });
    assert.deepEqual(parseShepherdCommand("start --isolate scout"), { sub: "start", command: { action: "start", agent: "scout", isolate: true } });
    assert.deepEqual(parseShepherdCommand('diff "recon one" --stat'), { sub: "diff", command: { action: "diff", target: "recon one", stat: true } });
    assert.deepEqual(parseShepherdCommand("diff recon"), { sub: "diff", command: { action: "diff", target: "recon" } });
    assert.deepEqual(parseShepherdCommand("land recon --squash"), { sub: "land", command: { action: "land", target: "recon", squash: true } });
    assert.deepEqual(parseShepherdCommand("land recon"), { sub: "land", command: { action: "land", target: "recon" } });
    assert.deepEqual(parseShepherdCommand('sync "recon one"'), { sub: "sync", command: { action: "sync", target: "recon one" } });
    assert.deepEqual(parseToolCommand({ action: "sync", agentId: "a_0123456789" }), { action: "sync", target: "a_0123456789" });
    assert.deepEqual(parseShepherdCommand('resume "recon one" --label again --placement workspace'), {
      sub: "resume",
      command: { action: "start", resume: "recon one", label: "again", placement: "workspace" },
    });
    assert.deepEqual(parseShepherdCommand("doctor"), { sub: "doctor", command: { action: "doctor" } });
    assert.deepEqual(parseShepherdCommand("log"), { sub: "log", limit: 20 });
    assert.deepEqual(parseShepherdCommand("log 5 --agent recon"), { sub: "log", limit: 5, agent: "recon" });
  });

  it("messages takes an optional sheep and --unread; reply takes the rest of the line as the answer", () => {
    assert.deepEqual(parseShepherdCommand("messages"), { sub: "messages", command: { action: "messages", unreadOnly: false } });
    assert.deepEqual(parseShepherdCommand('messages "big job" --unread'), {
      sub: "messages",
      command: { action: "messages", agentId: "big job", unreadOnly: true },
    });
    assert.deepEqual(parseShepherdCommand("messages --unread recon"), { sub: "messages", command: { action: "messages", agentId: "recon", unreadOnly: true } });
    assert.throws(() => parseShepherdCommand("messages --unread --unread"), /^ShepherdError: \[invalid_params\] "--unread" is given twice/);
    assert.throws(() => parseShepherdCommand("messages a b"), /^ShepherdError: \[invalid_params\] unexpected "b"/);
    assert.deepEqual(parseShepherdCommand("reply recon m_0123456789 North, by the   river."), {
      sub: "reply",
      command: { action: "reply", agentId: "recon", messageId: "m_0123456789", text: "North, by the river." },
    });
    assert.deepEqual(parseShepherdCommand('reply recon m_0123456789 "keep  two  spaces"'), {
      sub: "reply",
      command: { action: "reply", agentId: "recon", messageId: "m_0123456789", text: "keep  two  spaces" },
    });
    assert.throws(
      () => parseShepherdCommand("reply recon m_0123456789"),
      /^ShepherdError: \[invalid_params\] "reply" needs a sheep's id or label, the question's id and your answer/,
    );
  });

  it("refuses mistakes with [invalid_params] and the usage", () => {
    const cases: [string, RegExp][] = [
      ["frobnicate", /unknown subcommand "frobnicate"; one of herd, sheep, start/],
      ["start", /"start" needs an agent name\. Usage: \/shepherd start <agent>/],
      ["start a b", /unexpected "b"/],
      ["start scout --label", /"--label" needs a value/],
      ["start scout --label=", /"--label" needs a value/],
      ["start scout --colour red", /unknown option "--colour" for "start"/],
      ["start scout --label a --label b", /"--label" is given twice/],
      ["status", /"status" needs a sheep's id or label\. Usage: \/shepherd status <id\|label>/],
      ["close", /"close" needs a sheep's id or label/],
      ["read", /"read" needs a sheep's id or label/],
      ["read x --lines", /"--lines" needs a value/],
      ["status x --lines 3", /unknown option "--lines" for "status"/],
      ["read x --source screen --turns 2", /"turns" counts turns of the session file; the screen is read by "lines"/],
      ["read x --source pane", /"source" must be one of "session", "screen"/],
      ["herd now", /unexpected "now"/],
      ["sheep user extra", /unexpected "extra"/],
      ["close x --force", /"force" only applies together with "removeWorktree": true/],
      ["diff x --stat=yes", /"--stat" takes no value/],
      ["land x --squash --squash", /"--squash" is given twice/],
      ["land", /"land" needs a sheep's id or label/],
      ["sync", /"sync" needs a sheep's id or label/],
      ["sync a b", /unexpected "b"/],
      ["sync a --squash", /unknown option "--squash" for "sync"/],
      ["diff", /"diff" needs a sheep's id or label/],
      ["resume", /"resume" needs the id or label of a closed or exited sheep\. Usage: \/shepherd resume <id\|label>/],
      ["resume x --model m", /unknown option "--model" for "resume"/],
      ["log many", /N must be a whole number from 1 to 1000/],
      ["log 5 6", /unexpected "6"/],
    ];
    for (const [args, re] of cases) {
      assert.throws(
        () => parseShepherdCommand(args),
        (e: Error) => e.message.startsWith("[invalid_params] ") && re.test(e.message),
        args,
      );
    }
  });
});

describe("/shepherd completions", () => {
  const src: CompletionSources = {
    agents: async () => [
      { name: "scout", source: "bundled", description: "fast" },
      { name: "script-runner", source: "user", description: "runs" },
      { name: "worker", source: "bundled", description: "works" },
    ],
    sheep: () => [
      { agentId: "a_aaaaaaaaaa", label: "recon", agent: "scout", state: "idle" },
      { agentId: "a_bbbbbbbbbb", label: "big job", agent: "worker", state: "working" },
    ],
    resumable: async () => [
      { agentId: "a_cccccccccc", label: "old recon", agent: "scout" },
      { agentId: "a_dddddddddd", label: "planner", agent: "planner" },
      { agentId: "a_eeeeeeeeee", label: "old recon", agent: "scout" },
    ],
  };
  const values = async (prefix: string) => (await completeShepherdArgs(prefix, src))?.map((i) => i.value) ?? null;

  it("completes subcommands and the alias", async () => {
    assert.deepEqual(await values(""), [
      "herd ",
      "sheep ",
      "agents ",
      "start ",
      "resume ",
      "status ",
      "prompt ",
      "wait ",
      "read ",
      "diff ",
      "land ",
      "sync ",
      "close ",
      "interrupt ",
      "prune ",
      "doctor ",
      "log ",
      "messages ",
      "reply ",
      "panel ",
      "settings ",
      "trust ",
      "help ",
    ]);
    assert.deepEqual(await values("st"), ["start ", "status "]);
    assert.deepEqual(await values("ag"), ["agents "]);
    assert.equal(await values("zz"), null);
  });

  it("completes live sheep for messages and reply, and --unread as a switch", async () => {
    assert.deepEqual(await values("messages "), ["messages recon ", 'messages "big job" ']);
    assert.deepEqual(await values("messages --u"), ["messages --unread "]);
    assert.deepEqual(await values("messages --unread "), ["messages --unread recon ", 'messages --unread "big job" '], "a switch takes no value");
    assert.deepEqual(await values("reply r"), ["reply recon "]);
  });

  it("completes agent names for start, and live sheep for status, read and close", async () => {
    assert.deepEqual(await values("start "), ["start scout ", "start script-runner ", "start worker "]);
    assert.deepEqual(await values("start sc"), ["start scout ", "start script-runner "]);
    assert.deepEqual(await values("status "), ["status recon ", 'status "big job" ']);
    assert.deepEqual(await values("close b"), ['close "big job" ']);
    assert.deepEqual(await values("read a_b"), ["read a_bbbbbbbbbb "], "ids when an id is being typed");
    assert.deepEqual(await values('read "big'), ['read "big job" '], "inside an open quote");
    assert.deepEqual(await values("sheep "), ["sheep user ", "sheep project ", "sheep both "]);
    assert.deepEqual(await values("resume "), ['resume "old recon" ', "resume planner "], "resumable sheep, one per label");
    assert.deepEqual(await values("resume a_"), ["resume a_cccccccccc ", "resume a_dddddddddd ", "resume a_eeeeeeeeee "]);
    assert.deepEqual(await values("resume planner "), ["resume planner --label ", "resume planner --placement ", "resume planner --direction "]);
    assert.equal(await values("herd "), null);
    assert.equal(await values("bogus "), null);
  });

  it("tells resumable sheep apart: each offered with its id, agent, age and last task", async () => {
    const now = Date.parse("2026-12-05T12:00:00Z");
    const many: CompletionSources = {
      ...src,
      now: () => now,
      resumable: async () => [
        { agentId: "a_cccccccccc", label: "scout", agent: "scout", createdAt: "2026-12-05T09:55:00Z", lastTask: "find the parser" },
        { agentId: "a_dddddddddd", label: "scout 2", agent: "scout", createdAt: "2026-12-05T11:48:00Z" },
        { agentId: "a_eeeeeeeeee", label: "scout", agent: "scout", createdAt: "2026-12-05T11:59:15Z", lastTask: "read the tests" },
      ],
    };
    const items = async (prefix: string) => (await completeShepherdArgs(prefix, many))?.map((i) => [i.label, i.description]) ?? null;
    assert.deepEqual(await items("resume "), [
      ["scout", 'a_eeeeeeeeee · scout · started 45s ago · last: "read the tests"'],
      ["scout 2", "a_dddddddddd · scout · started 12m ago · no task on record"],
    ]);
    assert.deepEqual(await items("resume a_"), [
      ["a_cccccccccc", 'scout · scout · started 2h 5m ago · last: "find the parser"'],
      ["a_dddddddddd", "scout 2 · scout · started 12m ago · no task on record"],
      ["a_eeeeeeeeee", 'scout · scout · started 45s ago · last: "read the tests"'],
    ]);
  });

  it("completes flags and their values, never one already given", async () => {
    assert.deepEqual(await values("start scout "), [
      "start scout --label ",
      "start scout --placement ",
      "start scout --direction ",
      "start scout --host ",
      "start scout --cwd ",
      "start scout --scope ",
      "start scout --model ",
      "start scout --isolate ",
      "start scout --sandbox ",
    ]);
    assert.deepEqual(await values("start scout --pl"), ["start scout --placement "]);
    assert.deepEqual(await values("start scout --placement "), [
      "start scout --placement tab ",
      "start scout --placement pane ",
      "start scout --placement workspace ",
    ]);
    assert.deepEqual(await values("start scout --placement p"), ["start scout --placement pane "]);
    assert.deepEqual(await values("start --scope both "), ["start --scope both scout ", "start --scope both script-runner ", "start --scope both worker "]);
    assert.equal(await values("start scout --label "), null, "a label is free text");
    assert.deepEqual(await values("start scout --label x --"), [
      "start scout --label x --placement ",
      "start scout --label x --direction ",
      "start scout --label x --host ",
      "start scout --label x --cwd ",
      "start scout --label x --scope ",
      "start scout --label x --model ",
      "start scout --label x --isolate ",
      "start scout --label x --sandbox ",
    ]);
    assert.deepEqual(await values("read recon "), ["read recon --turns ", "read recon --source ", "read recon --lines "]);
    assert.deepEqual(await values("read recon --source "), ["read recon --source session ", "read recon --source screen ", "read recon --source egress "]);
    // A switch takes no value: the word after it is the next flag or the positional.
    assert.deepEqual(await values("start --isolate sc"), ["start --isolate scout ", "start --isolate script-runner "]);
    assert.deepEqual(await values("close recon --remove-worktree "), ["close recon --remove-worktree --force "]);
    assert.deepEqual(await values("diff recon "), ["diff recon --stat "]);
  });

  it("every completion parses back to what it offers", async () => {
    for (const v of [...((await values("status ")) ?? []), ...((await values("start scout --placement ")) ?? [])]) {
      assert.doesNotThrow(() => parseShepherdCommand(v), v);
    }
    assert.deepEqual(parseShepherdCommand('status "big job" '), { sub: "status", command: { action: "status", target: "big job" } });
  });
});

describe("/shepherd prompt and wait (issue 21, item 15)", () => {
  it("prompt takes the sheep, --steer or --follow-up, and the rest of the line as typed", () => {
    assert.deepEqual(parseShepherdCommand("prompt recon hello there"), {
      sub: "prompt",
      command: { action: "prompt", target: "recon", message: "hello there" },
    });
    assert.deepEqual(
      parseShepherdCommand(`prompt "big job" --steer  don't stop, and use --force "twice"  `),
      { sub: "prompt", command: { action: "prompt", target: "big job", message: `don't stop, and use --force "twice"`, deliverAs: "steer" } },
      "an apostrophe, quotes and a flag-like word are the text's own",
    );
    assert.deepEqual(parseShepherdCommand("prompt --follow-up recon next"), {
      sub: "prompt",
      command: { action: "prompt", target: "recon", message: "next", deliverAs: "followUp" },
    });
    const cases: [string, RegExp][] = [
      ["prompt", /"prompt" needs a sheep's id or label and the text to send\. Usage: \/shepherd prompt <id\|label>/],
      ["prompt recon", /"prompt" needs a sheep's id or label and the text to send/],
      ["prompt recon --steer", /"prompt" needs/],
      ["prompt recon --steer --follow-up go", /give one of "--steer" and "--follow-up"/],
      ["prompt recon --steer --steer go", /"--steer" is given twice/],
      ["prompt recon --loud go", /unknown option "--loud" for "prompt"/],
      ["wait a b", /unexpected "b"\. Usage: \/shepherd wait \[<id\|label>\]/],
    ];
    for (const [args, re] of cases) {
      assert.throws(
        () => parseShepherdCommand(args),
        (e: Error) => e.message.startsWith("[invalid_params] ") && re.test(e.message),
        args,
      );
    }
  });

  it("wait takes one sheep or none", () => {
    assert.deepEqual(parseShepherdCommand("wait"), { sub: "wait" });
    assert.deepEqual(parseShepherdCommand('wait "big job"'), { sub: "wait", target: "big job" });
  });
});

describe("/shepherd lines that said too little or the wrong thing (issue 21, item 16)", () => {
  it("a mistyped subcommand gets the nearest one", () => {
    const cases: [string, string | undefined][] = [
      ["hrd", "herd"],
      ["stauts", "status"],
      ["agnets", "agents"],
      ["promt", "prompt"],
      ["Herd", "herd"],
      ["frobnicate", undefined],
      ["xyz", undefined],
    ];
    for (const [word, near] of cases) {
      assert.throws(
        () => parseShepherdCommand(`${word} x`),
        (e: Error) =>
          e.message.startsWith(`[invalid_params] unknown subcommand "${word}"${near ? ` (did you mean "${near}"?)` : ""}; one of herd, `) &&
          (near !== undefined || !e.message.includes("did you mean")),
        word,
      );
    }
  });

  it("the slash menu's description names every subcommand", () => {
    const text = commandDescription();
    for (const s of SUBCOMMANDS) assert.match(text, new RegExp(`\\b${s.name}\\b`), s.name);
    for (const name of ["diff", "land", "messages", "reply", "help", "prompt", "wait"]) assert.ok(text.includes(name), name);
  });

  it("--remove-worktree is offered only for an isolated sheep, and --force only after it", async () => {
    const src: CompletionSources = {
      agents: async () => [],
      sheep: () => [
        { agentId: "a_aaaaaaaaaa", label: "recon", agent: "scout", state: "idle", isolated: false },
        { agentId: "a_ffffffffff", label: "fixer", agent: "worker", state: "idle", isolated: true },
      ],
      resumable: async () => [],
    };
    const values = async (prefix: string) => (await completeShepherdArgs(prefix, src))?.map((i) => i.value) ?? null;
    assert.equal(await values("close recon --"), null, "recon has no worktree of its own");
    assert.equal(await values("close recon "), null);
    assert.equal(await values("close --"), null, "no sheep named yet: nothing to offer, --force least of all");
    assert.deepEqual(await values("close fixer --"), ["close fixer --remove-worktree "]);
    assert.deepEqual(await values("close a_ffffffffff "), ["close a_ffffffffff --remove-worktree "], "by id too");
    assert.deepEqual(await values("close fixer --remove-worktree "), ["close fixer --remove-worktree --force "]);
    assert.deepEqual(await values("prompt r"), ["prompt recon "]);
    assert.deepEqual(await values("wait "), ["wait recon ", "wait fixer "]);
    assert.deepEqual(await values("prompt recon --"), ["prompt recon --steer ", "prompt recon --follow-up "]);
    assert.equal(await values("prompt recon hello "), null, "the text is free");
  });
});

describe("/shepherd completions never hold back a whole command (issue 21, item 12)", () => {
  const src: CompletionSources = {
    agents: async () => [
      { name: "scout", source: "bundled", description: "fast" },
      { name: "script-runner", source: "user", description: "runs" },
    ],
    sheep: () => [
      { agentId: "a_aaaaaaaaaa", label: "recon", agent: "scout", state: "idle" },
      { agentId: "a_gggggggggg", label: "recon-2", agent: "scout", state: "idle" },
    ],
    resumable: async () => [{ agentId: "a_cccccccccc", label: "planner", agent: "planner" }],
  };
  const values = async (prefix: string) => (await completeShepherdArgs(prefix, src))?.map((i) => i.value) ?? null;

  it("a word typed whole opens no menu (pi's Enter would only take the completion)", async () => {
    for (const name of subcommandNames()) assert.equal(await values(name), null, name);
    for (const line of [
      "close recon",
      "diff recon",
      "land recon",
      "status a_aaaaaaaaaa",
      "start scout",
      "sheep both",
      "resume planner",
      "read recon --source screen",
      "start scout --placement pane",
      "wait recon",
    ]) {
      assert.equal(await values(line), null, line);
    }
  });

  it("a word still being typed is completed as before", async () => {
    assert.deepEqual(await values("clo"), ["close "]);
    assert.deepEqual(await values("he"), ["herd ", "help "]);
    assert.deepEqual(await values("close rec"), ["close recon ", "close recon-2 "]);
    assert.deepEqual(await values("start scou"), ["start scout "]);
    assert.deepEqual(await values("read recon --source scr"), ["read recon --source screen "]);
  });
});
