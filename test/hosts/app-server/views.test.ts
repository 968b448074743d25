/**
 * Declarative views over `knightcode app-server`: a widget set as `{view}` reaches the client (in the thread's `ui`
 * and as `ui/widget`), `ui/event` reaches every `ctx.ui.onViewEvent` handler, which answers by setting the widget
 * again; values that do not fit a control are refused, a gone control reaches nobody, a failing handler becomes a
 * warning, and an invalid view is refused with a warning.
 */
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

const VIEWS = `export default (kc: any) => {
  let verbose = false;
  let presses = 0;
  const draw = (ctx: any) => ctx.ui.setWidget("checks", { view: { type: "stack", children: [
    { type: "text", text: "\\u001b[1mChecks\\u001b[0m", tone: "muted" },
    { type: "toggle", id: "verbose", label: "Verbose", value: verbose },
    { type: "select", id: "level", label: "Level", options: ["low", "high"], value: "low" },
    { type: "textField", id: "note", label: "Note" },
    { type: "button", id: "run", label: "Run " + presses },
    { type: "button", id: "boom", label: "Fail" },
  ] } });
  kc.on("session_start", (_e: any, ctx: any) => {
    draw(ctx);
    let deep: any = { type: "text", text: "x" };
    for (let i = 0; i < 9; i++) deep = { type: "list", items: [deep] };
    ctx.ui.setWidget("deep", { view: deep });
    ctx.ui.onViewEvent((event: any) => {
      if (event.id === "boom") throw new Error("the boom handler failed");
      if (event.id === "verbose") verbose = event.value;
      if (event.id === "run") presses++;
      draw(ctx);
    });
    ctx.ui.onViewEvent((event: any) => ctx.ui.setStatus("last", event.widgetKey + "/" + event.id + "=" + String(event.value)));
  });
};`;

describe("knightcode app-server: declarative views and ui/event", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-views-");

  it("sends view widgets and routes ui/event to every onViewEvent handler", async () => {
    h = await harness(tmp.path, { "views.ts": VIEWS });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const started = await client.request("thread/start", { cwd: h.project });
    const threadId = started.thread.id;
    const widget = started.ui.widgets.find((w) => w.key === "checks")!;
    expect(widget.placement).to.equal("aboveEditor");
    const view = widget.view as { children: Record<string, unknown>[] };
    expect(view.children[0]).to.deep.equal({ type: "text", text: "Checks", tone: "muted" });
    expect(view.children[1]).to.deep.equal({ type: "toggle", id: "verbose", label: "Verbose", value: false });
    // Nine levels of lists: refused, with a warning that says why.
    expect(started.ui.widgets.map((w) => w.key)).to.deep.equal(["checks"]);
    expect(started.warnings.map((w) => w.message).join("\n")).to.match(
      /Widget "deep" refused: .*deeper than 8/,
    );

    expect(
      await client.request("ui/event", { threadId, widgetKey: "checks", id: "verbose", value: true }),
    ).to.deep.equal({});
    const redrawn = notifications(server, "ui/widget").at(-1)!;
    expect(redrawn.key).to.equal("checks");
    expect(redrawn.view.children[1].value).to.equal(true);
    expect(notifications(server, "ui/state").at(-1)!.statuses).to.deep.equal([
      { key: "last", text: "checks/verbose=true" },
    ]);
    await client.request("ui/event", { threadId, widgetKey: "checks", id: "run" });
    expect(notifications(server, "ui/widget").at(-1)!.view.children[4].label).to.equal("Run 1");
    await client.request("ui/event", { threadId, widgetKey: "checks", id: "level", value: "high" });
    await client.request("ui/event", { threadId, widgetKey: "checks", id: "note", value: "typed" });
    expect(notifications(server, "ui/state").at(-1)!.statuses[0].text).to.equal("checks/note=typed");

    for (const [params, what] of [
      [{ id: "verbose", value: "yes" }, "a toggle takes true or false"],
      [{ id: "level", value: "medium" }, "not one of its options"],
      [{ id: "run", value: "x" }, "a button takes no value"],
      [{ id: "note", value: true }, "takes a string"],
    ] as const) {
      const refused = await client
        .request("ui/event", { threadId, widgetKey: "checks", ...params } as never)
        .catch((e) => e);
      expect(refused.data, what).to.deep.include({ code: "invalidParams", reason: "value" });
      expect(refused.message).to.contain(what);
    }

    // Gone: answered {} and nobody hears it.
    const before = notifications(server, "ui/state").length;
    expect(await client.request("ui/event", { threadId, widgetKey: "checks", id: "nope" })).to.deep.equal({});
    expect(await client.request("ui/event", { threadId, widgetKey: "none", id: "run" })).to.deep.equal({});
    expect(notifications(server, "ui/state")).to.have.length(before);

    // A failing handler is a warning; the other handlers still run.
    await client.request("ui/event", { threadId, widgetKey: "checks", id: "boom" });
    expect(notifications(server, "warning").map((w) => w.message)).to.include(
      "A view event handler failed: the boom handler failed",
    );
    expect(notifications(server, "ui/state").at(-1)!.statuses[0].text).to.equal("checks/boom=undefined");

    const missing = await client
      .request("ui/event", { threadId: "nope", widgetKey: "checks", id: "run" })
      .catch((e) => e);
    expect(missing.data?.code).to.equal("threadNotFound");
  });
});
