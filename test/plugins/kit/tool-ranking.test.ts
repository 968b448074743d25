import { expect } from "chai";
import {
  parseToolQuery,
  type RankableTool,
  rankTools,
  toolWords,
  unknownSelections,
} from "../../../plugins/kit/tool-ranking.js";

/** A fixed catalogue, in registration order: the expected rankings below are facts about it. */
const CATALOGUE: RankableTool[] = [
  {
    name: "mcp__jira__create_issue",
    description: "Create a new issue in a Jira project.",
    namespace: { name: "mcp__jira", aliases: ["jira"], description: "Issue tracker" },
    parameters: {
      type: "object",
      properties: {
        project: { type: "string", description: "Project key" },
        summary: { type: "string", description: "One-line title" },
        priority: { type: "string", enum: ["low", "medium", "high"] },
      },
    },
  },
  {
    name: "mcp__jira__search_issues",
    description: "Search issues with JQL.",
    namespace: { name: "mcp__jira", aliases: ["jira"], description: "Issue tracker" },
    parameters: { type: "object", properties: { jql: { type: "string", description: "The query" } } },
  },
  {
    name: "mcp__docs__search",
    description: "Full-text search over the product documentation.",
    namespace: { name: "mcp__docs", aliases: ["docs"], description: "Product docs" },
    parameters: { type: "object", properties: { query: { type: "string" } } },
  },
  {
    name: "mcp__docs__get_page",
    description: "Fetch one documentation page by its path.",
    namespace: { name: "mcp__docs", aliases: ["docs"] },
    parameters: { type: "object", properties: { path: { type: "string", description: "Page path" } } },
  },
  {
    name: "send_email",
    description: "Send an email message to a recipient.",
    parameters: {
      type: "object",
      properties: { to: { type: "string" }, body: { type: "string", description: "Message text" } },
    },
  },
  {
    name: "calendarCreateEvent",
    description: "Add an event to the calendar.",
    parameters: {
      type: "object",
      properties: { visibility: { type: "string", enum: ["private", "public"] } },
    },
  },
];

const names = (query: string, limit?: number) => rankTools(CATALOGUE, query, limit).map((r) => r.tool.name);

describe("tool ranking (BM25)", () => {
  it("splits words at camelCase, underscores and punctuation, without stop words", () => {
    expect(toolWords("calendarCreateEvent for the mcp__docs-search")).to.deep.equal([
      "calendar",
      "create",
      "event",
      "mcp",
      "doc",
      "search",
    ]);
  });

  it("ranks a tool whose name has the words above one that only describes them", () => {
    expect(names("create issues")).to.deep.equal([
      "mcp__jira__create_issue",
      "mcp__jira__search_issues",
      "calendarCreateEvent",
    ]);
  });

  it("finds tools by namespace alias, description, parameter names and enum values", () => {
    expect(names("documentation")[0]).to.equal("mcp__docs__search");
    expect(names("docs")).to.deep.equal(["mcp__docs__search", "mcp__docs__get_page"]);
    expect(names("jql")).to.deep.equal(["mcp__jira__search_issues"]);
    expect(names("private")).to.deep.equal(["calendarCreateEvent"]);
    expect(names("email recipient")).to.deep.equal(["send_email"]);
  });

  it("matches a whole tool name written as one word", () => {
    expect(names("send_email")[0]).to.equal("send_email");
    expect(names("calendarCreateEvent")[0]).to.equal("calendarCreateEvent");
  });

  it("prefers the shorter of two tools that mention a word as often, and honours the limit", () => {
    expect(names("search")).to.deep.equal(["mcp__jira__search_issues", "mcp__docs__search"]);
    expect(names("search", 1)).to.deep.equal(["mcp__jira__search_issues"]);
  });

  it("keeps registration order between equal scores", () => {
    const twin = (name: string): RankableTool => ({ name, description: "Rotate the logs." });
    const order = (tools: RankableTool[]) => rankTools(tools, "rotate logs").map((r) => r.tool.name);
    expect(order([twin("alpha_tool"), twin("bravo_tool")])).to.deep.equal(["alpha_tool", "bravo_tool"]);
    expect(order([twin("bravo_tool"), twin("alpha_tool")])).to.deep.equal(["bravo_tool", "alpha_tool"]);
  });

  it("requires +words", () => {
    expect(names("search +jira")).to.deep.equal(["mcp__jira__search_issues", "mcp__jira__create_issue"]);
    expect(names("+search +jira")).to.deep.equal(["mcp__jira__search_issues"]);
    expect(names("+nothing search")).to.deep.equal([]);
  });

  it("returns nothing for a query without words", () => {
    expect(names("the of")).to.deep.equal([]);
    expect(names("   ")).to.deep.equal([]);
  });

  it("select: picks exact names and whole namespaces in the order given", () => {
    expect(names("select:send_email,mcp__docs__get_page")).to.deep.equal([
      "send_email",
      "mcp__docs__get_page",
    ]);
    expect(names("select:jira")).to.deep.equal(["mcp__jira__create_issue", "mcp__jira__search_issues"]);
    expect(names("select:mcp-docs")).to.deep.equal(["mcp__docs__search", "mcp__docs__get_page"]);
    expect(unknownSelections(CATALOGUE, parseToolQuery("select:jira, nope").select!)).to.deep.equal(["nope"]);
  });
});
