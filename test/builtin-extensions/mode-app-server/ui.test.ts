/** A thread's extension UI: cleaning, ordering and the limits of docs/app-server.md. */
import { expect } from "chai";
import { ThreadUi, type UiHost } from "../../../builtin-extensions/mode-app-server/ui.js";

function recorder(): {
  host: UiHost;
  sent: [string, Record<string, unknown>][];
  warnings: string[];
  logs: string[];
} {
  const sent: [string, Record<string, unknown>][] = [];
  const warnings: string[] = [];
  const logs: string[] = [];
  return {
    sent,
    warnings,
    logs,
    host: {
      dialog: async () => undefined,
      notify: (method, params) => sent.push([method, params]),
      warn: (message) => warnings.push(message),
      log: (message) => logs.push(message),
    },
  };
}

describe("app-server extension UI", () => {
  it("strips ANSI, keeps one line, cuts to 200 code points and sorts statuses", () => {
    const r = recorder();
    const ui = new ThreadUi(r.host);
    ui.setStatus("b", "\u001b[32mgreen\u001b[0m\nnext");
    ui.setStatus("a", "😀".repeat(250));
    ui.setTitle("\u001b]0;x\u0007Title");
    const snap = ui.snapshot();
    expect(snap.statuses.map((s) => s.key)).to.deep.equal(["a", "b"]);
    expect(snap.statuses[1]!.text).to.equal("green next");
    expect([...snap.statuses[0]!.text]).to.have.length(200);
    expect(snap.title).to.equal("Title");
    expect(r.sent.filter(([m]) => m === "ui/state")).to.have.length(3);
    ui.setStatus("b", "green next");
    expect(r.sent.filter(([m]) => m === "ui/state")).to.have.length(3);
  });

  it("orders widgets above first, moves a re-set widget to the end, and keeps line spacing", () => {
    const r = recorder();
    const ui = new ThreadUi(r.host);
    ui.setWidget("x", ["  a"], { placement: "belowEditor" });
    ui.setWidget("y", ["b"]);
    ui.setWidget("z", ["c"]);
    ui.setWidget("y", ["b2"]);
    expect(ui.snapshot().widgets.map((w) => w.key)).to.deep.equal(["z", "y", "x"]);
    expect(ui.snapshot().widgets[2]).to.deep.equal({ key: "x", placement: "belowEditor", lines: ["  a"] });
    ui.setWidget("z", undefined);
    expect(r.sent.at(-1)).to.deep.equal(["ui/widget", { key: "z" }]);
  });

  it("refuses what passes the limits, with one warning per key", () => {
    const r = recorder();
    const ui = new ThreadUi(r.host);
    ui.setWidget("big", ["x".repeat(17 * 1024)]);
    ui.setWidget("big", ["x".repeat(17 * 1024)]);
    ui.setWidget("", ["empty key"]);
    ui.setStatus("k".repeat(129), "too long a key");
    for (let i = 0; i < 17; i++) ui.setWidget(`w${i}`, [String(i)]);
    for (let i = 0; i < 51; i++) ui.setStatus(`s${i}`, String(i));
    const snap = ui.snapshot();
    expect(snap.widgets).to.have.length(16);
    expect(snap.statuses).to.have.length(50);
    expect(r.warnings).to.have.length(5);
    expect(r.warnings[0]).to.contain("16 KiB");
  });

  it("draws nothing for terminal-only UI and logs once per method; /reload clears everything", () => {
    const r = recorder();
    const ui = new ThreadUi(r.host);
    ui.setFooter();
    ui.setFooter();
    ui.setWidget("c", () => ({ render: () => [] }) as never);
    expect(r.logs).to.have.length(2);
    ui.setStatus("s", "x");
    ui.setWidget("w", ["a"]);
    ui.setWidget("v", ["b"]);
    r.sent.length = 0;
    ui.clear();
    expect(r.sent).to.deep.equal([
      ["ui/state", { statuses: [], workingVisible: true }],
      ["ui/widget", { key: "w" }],
      ["ui/widget", { key: "v" }],
    ]);
    ui.setFooter();
    expect(r.logs).to.have.length(3);
  });
});
