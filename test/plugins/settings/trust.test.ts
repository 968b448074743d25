import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import type { ProjectTrustResult } from "../../../kernel/api/events.js";
import { HookBus } from "../../../kernel/events/hook-bus.js";
import { loadSettings } from "../../../plugins/settings/settings.js";
import {
  findProtectedInputs,
  projectTrustGateOptions,
  type ResolveProjectTrustOptions,
  readTrustDecisions,
  resolveProjectTrust,
  saveTrustDecision,
  TRUST_CHOICES,
  type TrustUI,
} from "../../../plugins/settings/trust.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** A UI whose answers are scripted; records every dialog. */
function scriptedUI(answers: { confirm?: boolean[]; select?: (string | undefined)[] }, withSelect = false) {
  const calls: { kind: string; title: string; message?: string; options?: string[] }[] = [];
  const confirms = [...(answers.confirm ?? [])];
  const selects = [...(answers.select ?? [])];
  const ui: TrustUI = {
    async confirm(title, message) {
      calls.push({ kind: "confirm", title, message });
      if (confirms.length === 0) throw new Error(`unexpected confirm: ${title}`);
      return confirms.shift()!;
    },
  };
  if (withSelect) {
    ui.select = async (title, options) => {
      calls.push({ kind: "select", title, options });
      if (selects.length === 0) throw new Error(`unexpected select: ${title}`);
      return selects.shift();
    };
  }
  return { ui, calls };
}

describe("plugins/settings resolveProjectTrust", () => {
  const tmp = useTempDir("kc-trust-");
  const agentDir = () => join(tmp.path, "agent");
  const cwd = () => join(tmp.path, "work", "repo");
  const trustFile = () => join(agentDir(), "trust.json");
  let warnings: string[];

  beforeEach(() => {
    warnings = [];
    tmp.write("work/repo/.knightcode/settings.json", "{}");
    tmp.write("work/repo/.knightcode/extensions/x.ts", "export default () => {};");
  });

  function options(extra: Partial<ResolveProjectTrustOptions> = {}): ResolveProjectTrustOptions {
    return {
      cwd: cwd(),
      agentDir: agentDir(),
      settings: loadSettings({ agentDir: agentDir(), cwd: cwd(), projectTrusted: false }),
      hasUI: false,
      warn: (message) => warnings.push(message),
      now: () => new Date("2030-01-02T03:04:05.000Z"),
      ...extra,
    };
  }
  const handlerSaying = (result: ProjectTrustResult | undefined) => async () => result;
  const setDefault = (value: string) =>
    tmp.write("agent/settings.json", JSON.stringify({ defaultProjectTrust: value }));

  it("needs no decision without protected inputs (a bare .knightcode does not count)", async () => {
    mkdirSync(join(tmp.path, "plain", ".knightcode"), { recursive: true });
    tmp.write("plain/AGENTS.md", "hi");
    let asked = false;
    const decision = await resolveProjectTrust(
      options({
        cwd: join(tmp.path, "plain"),
        approve: true,
        handlers: async () => {
          asked = true;
          return { trusted: "yes" };
        },
      }),
    );
    expect(decision).to.deep.equal({ trusted: false, source: "not-needed", protectedInputs: [] });
    expect(asked).to.equal(false);
    expect(warnings).to.deep.equal([]);
  });

  it("lists the protected inputs found", async () => {
    tmp.write("work/repo/.knightcode/APPEND_SYSTEM.md", "x");
    mkdirSync(join(cwd(), ".knightcode", "skills"));
    expect(await findProtectedInputs(cwd())).to.deep.equal([
      ".knightcode/settings.json",
      ".knightcode/extensions/",
      ".knightcode/skills/",
      ".knightcode/APPEND_SYSTEM.md",
    ]);
  });

  it("counts .agents/skills in the cwd and above it, but not the home folder's", async () => {
    const savedHome = process.env.HOME;
    process.env.HOME = tmp.path;
    const repo = join(tmp.path, "other", "repo");
    try {
      mkdirSync(join(tmp.path, ".agents", "skills"), { recursive: true });
      mkdirSync(repo, { recursive: true });
      expect(await findProtectedInputs(repo)).to.deep.equal([]);
      mkdirSync(join(repo, ".agents", "skills"), { recursive: true });
      mkdirSync(join(tmp.path, "other", ".agents", "skills"), { recursive: true });
      expect(await findProtectedInputs(repo)).to.deep.equal([".agents/skills/", "../.agents/skills/"]);
    } finally {
      if (savedHome === undefined) delete process.env.HOME;
      else process.env.HOME = savedHome;
    }
  });

  it("follows the order flag > handler > saved > default", async () => {
    setDefault("never");
    saveTrustDecision({ agentDir: agentDir(), path: cwd(), trusted: true });
    const yes = handlerSaying({ trusted: "yes" });
    const no = handlerSaying({ trusted: "no" });

    expect(await resolveProjectTrust(options({ approve: false, handlers: yes }))).to.include({
      trusted: false,
      source: "flag",
    });
    expect(await resolveProjectTrust(options({ approve: true, handlers: no }))).to.include({
      trusted: true,
      source: "flag",
    });
    expect(await resolveProjectTrust(options({ handlers: no }))).to.include({
      trusted: false,
      source: "extension",
    });
    expect(
      await resolveProjectTrust(options({ handlers: handlerSaying({ trusted: "undecided" }) })),
    ).to.include({
      trusted: true,
      source: "saved",
    });
    expect(await resolveProjectTrust(options({ handlers: handlerSaying(undefined) }))).to.include({
      trusted: true,
      source: "saved",
    });
    writeFileSync(trustFile(), JSON.stringify({ version: 1, decisions: {} }));
    expect(await resolveProjectTrust(options())).to.include({ trusted: false, source: "default" });
    setDefault("always");
    expect(await resolveProjectTrust(options())).to.include({ trusted: true, source: "default" });
    expect(warnings).to.deep.equal([]);
  });

  it("treats a failing handler function as a refusal, with a warning", async () => {
    const decision = await resolveProjectTrust(
      options({
        handlers: async () => {
          throw new Error("boom");
        },
      }),
    );
    expect(decision).to.include({ trusted: false, source: "extension" });
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain("boom");
  });

  it("saves a handler's decision with remember: true, in trust.json with mode 0600", async () => {
    const decision = await resolveProjectTrust(
      options({ handlers: handlerSaying({ trusted: "yes", remember: true }) }),
    );
    expect(decision).to.deep.include({ trusted: true, source: "extension", remembered: true });
    expect(JSON.parse(readFileSync(trustFile(), "utf8"))).to.deep.equal({
      version: 1,
      decisions: { [cwd()]: { trusted: true, at: "2030-01-02T03:04:05.000Z" } },
    });
    expect(statSync(trustFile()).mode & 0o777).to.equal(0o600);
    expect(await resolveProjectTrust(options())).to.include({ trusted: true, source: "saved" });
  });

  it("uses the closest saved ancestor and keeps other decisions when saving", () => {
    const work = join(tmp.path, "work");
    saveTrustDecision({ agentDir: agentDir(), path: tmp.path, trusted: true });
    saveTrustDecision({ agentDir: agentDir(), path: work, trusted: false });
    saveTrustDecision({ agentDir: agentDir(), path: join(tmp.path, "work", "rep"), trusted: true });
    const decisions = readTrustDecisions(agentDir());
    expect([...decisions.keys()]).to.have.members([tmp.path, work, join(tmp.path, "work", "rep")]);
    expect(statSync(trustFile()).mode & 0o777).to.equal(0o600);
    return resolveProjectTrust(options()).then((decision) => {
      // work/repo: "work" (untrusted) is closer than tmp (trusted); "work/rep" is not an ancestor.
      expect(decision).to.include({ trusted: false, source: "saved" });
    });
  });

  it("asks with a UI (confirm, then remember) and saves the answer", async () => {
    const { ui, calls } = scriptedUI({ confirm: [true, true] });
    const decision = await resolveProjectTrust(options({ ui, hasUI: true }));
    expect(decision).to.deep.include({ trusted: true, source: "prompt", remembered: true });
    expect(calls).to.have.length(2);
    expect(calls[0]!.title).to.equal("Trust this project?");
    expect(calls[0]!.message).to.contain(cwd());
    expect(calls[0]!.message)
      .to.contain(".knightcode/settings.json")
      .and.to.contain(".knightcode/extensions/");
    expect(readTrustDecisions(agentDir()).get(cwd())?.trusted).to.equal(true);

    const once = scriptedUI({ confirm: [true, false] });
    writeFileSync(trustFile(), "{}");
    expect(await resolveProjectTrust(options({ ui: once.ui, hasUI: true }))).to.deep.equal({
      trusted: true,
      source: "prompt",
      protectedInputs: [".knightcode/settings.json", ".knightcode/extensions/"],
    });
    const refused = scriptedUI({ confirm: [false] });
    expect(await resolveProjectTrust(options({ ui: refused.ui, hasUI: true }))).to.include({
      trusted: false,
      source: "prompt",
    });
    expect(refused.calls).to.have.length(1);
    expect(warnings.filter((w) => !w.includes("trust.json"))).to.deep.equal([]);
  });

  it("asks with one select when the UI has one", async () => {
    const remember = scriptedUI({ select: [TRUST_CHOICES.remember] }, true);
    expect(await resolveProjectTrust(options({ ui: remember.ui, hasUI: true }))).to.deep.include({
      trusted: true,
      source: "prompt",
      remembered: true,
    });
    expect(remember.calls).to.have.length(1);
    expect(remember.calls[0]!.options).to.deep.equal(["Trust once", "Trust and remember", "Do not trust"]);
    expect(remember.calls[0]!.title).to.contain("Trust this project?").and.to.contain(cwd());
    expect(readTrustDecisions(agentDir()).get(cwd())?.trusted).to.equal(true);

    writeFileSync(trustFile(), JSON.stringify({ version: 1, decisions: {} }));
    for (const [answer, trusted] of [
      [TRUST_CHOICES.once, true],
      [TRUST_CHOICES.refuse, false],
      [undefined, false],
    ] as const) {
      const { ui } = scriptedUI({ select: [answer] }, true);
      const decision = await resolveProjectTrust(options({ ui, hasUI: true }));
      expect(decision, String(answer)).to.deep.equal({
        trusted,
        source: "prompt",
        protectedInputs: decision.protectedInputs,
      });
    }
    expect(readTrustDecisions(agentDir()).size).to.equal(0);
  });

  it("treats a failing dialog as a refusal, with a warning", async () => {
    const { ui } = scriptedUI({ confirm: [] }); // the scripted UI throws on an unexpected dialog
    expect(await resolveProjectTrust(options({ ui, hasUI: true }))).to.include({
      trusted: false,
      source: "prompt",
    });
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain("The trust dialog failed").and.to.contain("unexpected confirm");
  });

  it("without a UI, 'ask' leaves the project untrusted and warns exactly once", async () => {
    const { ui, calls } = scriptedUI({});
    const decision = await resolveProjectTrust(options({ ui, hasUI: false }));
    expect(decision).to.include({ trusted: false, source: "default" });
    expect(calls).to.deep.equal([]);
    expect(warnings).to.deep.equal([
      `Project resources in ${cwd()}/.knightcode were not loaded: the project is not trusted. ` +
        `Use --trust-project or set "defaultProjectTrust" in ${agentDir()}/settings.json.`,
    ]);
  });

  it("warns about a malformed trust.json once, reads it as empty, and keeps it as a backup when saving", async () => {
    mkdirSync(agentDir(), { recursive: true });
    writeFileSync(trustFile(), '{"version": 1, "decisions": {');
    const { ui } = scriptedUI({ confirm: [true, true] });
    const decision = await resolveProjectTrust(options({ ui, hasUI: true }));
    expect(decision).to.deep.include({ trusted: true, source: "prompt", remembered: true });
    expect(warnings).to.have.length(2);
    expect(warnings[0]).to.contain(
      `${trustFile()}:1:30: invalid JSON: the text ends before \`}\` closes the object`,
    );
    const backups = readdirSync(agentDir()).filter((name) => name.startsWith("trust.json.invalid-"));
    expect(backups).to.have.length(1);
    expect(warnings[1]).to.equal(
      `${trustFile()} could not be read as trust decisions; it was kept as ${join(agentDir(), backups[0]!)}.`,
    );
    expect(readFileSync(join(agentDir(), backups[0]!), "utf8")).to.equal('{"version": 1, "decisions": {');
    expect(readTrustDecisions(agentDir()).get(cwd())?.trusted).to.equal(true);

    writeFileSync(trustFile(), JSON.stringify({ version: 2, decisions: [] }));
    const seen: string[] = [];
    expect(readTrustDecisions(agentDir(), (m) => seen.push(m)).size).to.equal(0);
    expect(seen[0]).to.contain('expected {"version": 1');
  });

  it("runs the project_trust gate on a hook bus: undecided passes, a throwing handler means no", async () => {
    const errors: unknown[] = [];
    const bus = new HookBus({ onHandlerError: (report) => errors.push(report.error) });
    const owner = (id: string, order: number) => ({ id, order, origin: "user" as const });
    const seen: string[] = [];
    bus.on(
      "project_trust",
      () => {
        seen.push("first");
        return { trusted: "undecided" };
      },
      owner("user:a", 1),
    );
    const off = bus.on(
      "project_trust",
      () => {
        seen.push("second");
        throw new Error("handler broke");
      },
      owner("user:b", 2),
    );
    bus.on("project_trust", () => ({ trusted: "yes", remember: true }), owner("user:c", 3));
    const handlers = (event: { cwd: string }) =>
      bus.gate("project_trust", event, undefined, projectTrustGateOptions);

    expect(await resolveProjectTrust(options({ handlers }))).to.include({
      trusted: false,
      source: "extension",
    });
    expect(seen).to.deep.equal(["first", "second"]);
    expect(errors).to.have.length(1);
    expect(readTrustDecisions(agentDir()).size).to.equal(0);

    off();
    expect(await resolveProjectTrust(options({ handlers }))).to.deep.include({
      trusted: true,
      source: "extension",
      remembered: true,
    });
  });
});
