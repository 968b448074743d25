/**
 * Declarative views: the check a host runs before sending one, the text lines a host that draws none shows, and
 * the SDK's wrapper turning a widget's view into those lines for such a host (while one that draws views gets it
 * as it is).
 */
import { expect } from "chai";
import { withPromptEvents } from "../../../hosts/sdk/ui-prompt-events.js";
import type { ExtensionUIContext, ViewNode } from "../../../kernel/index.js";
import { headlessUI } from "../../../plugins/kit/headless-ui.js";
import { findControl, viewProblem, viewToLines } from "../../../plugins/kit/views.js";

const VIEW: ViewNode = {
  type: "stack",
  children: [
    { type: "text", text: "Checks" },
    { type: "toggle", id: "v", label: "Verbose", value: true },
    {
      type: "list",
      items: [
        { type: "text", text: "one" },
        { type: "button", id: "go", label: "Go" },
      ],
    },
    {
      type: "stack",
      direction: "horizontal",
      children: [
        { type: "select", id: "lvl", label: "Level", options: ["a", "b"], value: "b" },
        { type: "textField", id: "n", label: "Note", value: "hi" },
      ],
    },
  ],
};

describe("declarative views", () => {
  it("accepts a valid view and names the first problem of an invalid one", () => {
    expect(viewProblem(VIEW)).to.equal(undefined);
    expect(findControl(VIEW, "go")).to.deep.equal({ type: "button", id: "go", label: "Go" });
    expect(findControl(VIEW, "nope")).to.equal(undefined);
    let deep: ViewNode = { type: "text", text: "x" };
    for (let i = 0; i < 8; i++) deep = { type: "list", items: [deep] };
    expect(viewProblem(deep)).to.equal(undefined);
    expect(viewProblem({ type: "list", items: [deep] })).to.match(/deeper than 8 levels/);
    expect(viewProblem({ type: "html", html: "<b>" })).to.match(/not a view node type/);
    expect(
      viewProblem({
        type: "stack",
        children: [
          { type: "button", id: "a", label: "A" },
          { type: "button", id: "a", label: "B" },
        ],
      }),
    ).to.match(/"a" is used twice/);
    expect(viewProblem({ type: "toggle", id: "t", label: "T", value: "yes" })).to.match(/true or false/);
    expect(viewProblem({ type: "select", id: "s", options: ["a"], value: "b" })).to.match(
      /not one of its options/,
    );
    expect(viewProblem({ type: "button", id: "", label: "x" })).to.match(/1 to 128 characters/);
  });

  it("draws a view as text lines", () => {
    expect(viewToLines(VIEW)).to.deep.equal([
      "Checks",
      "[x] Verbose",
      "• one",
      "• [ Go ]",
      "Level: b  Note: hi",
    ]);
  });

  it("hands a host that draws no views the lines, and one that does the view", () => {
    const seen: unknown[] = [];
    const host = (drawsViews: boolean): ExtensionUIContext => ({
      ...headlessUI,
      ...(drawsViews ? { drawsViews } : {}),
      setWidget: (_key, content) => {
        seen.push(content);
      },
    });
    withPromptEvents(host(false), () => undefined).setWidget("w", { view: VIEW });
    withPromptEvents(host(false), () => undefined).setWidget("w", ["plain"]);
    withPromptEvents(host(true), () => undefined).setWidget("w", { view: VIEW });
    expect(seen).to.deep.equal([viewToLines(VIEW), ["plain"], { view: VIEW }]);
  });
});
