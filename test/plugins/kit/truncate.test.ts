/** The truncation helpers extensions share with the core tools, with pi's `TruncationResult` shape. */
import * as root from "@knightcodeai/cli";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
} from "@knightcodeai/cli/kit";
import { expect } from "chai";

describe("truncation helpers (kit)", () => {
  it("are exported from the package root too, with pi's limits", () => {
    expect(root.truncateHead).to.equal(truncateHead);
    expect(root.truncateTail).to.equal(truncateTail);
    expect(root.formatSize).to.equal(formatSize);
    expect([DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES]).to.deep.equal([2000, 50 * 1024]);
  });

  it("leave text within both limits alone and say so", () => {
    expect(truncateHead("a\nb")).to.deep.equal({
      content: "a\nb",
      truncated: false,
      truncatedBy: null,
      totalLines: 2,
      totalBytes: 3,
      outputLines: 2,
      outputBytes: 3,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      maxLines: DEFAULT_MAX_LINES,
      maxBytes: DEFAULT_MAX_BYTES,
    });
  });

  it("truncateHead keeps whole lines from the start, by lines or by bytes", () => {
    expect(truncateHead("1\n2\n3\n4", { maxLines: 2 })).to.deep.include({
      content: "1\n2",
      truncated: true,
      truncatedBy: "lines",
      totalLines: 4,
      outputLines: 2,
      outputBytes: 3,
    });
    expect(truncateHead("aaaa\nbbbb\ncccc", { maxBytes: 10 })).to.deep.include({
      content: "aaaa\nbbbb",
      truncatedBy: "bytes",
      outputBytes: 9,
      totalBytes: 14,
    });
    expect(truncateHead("é".repeat(10), { maxBytes: 5 })).to.deep.include({
      content: "",
      truncated: true,
      truncatedBy: "bytes",
      outputLines: 0,
      firstLineExceedsLimit: true,
    });
  });

  it("truncateTail keeps whole lines from the end, or the end of a last line that alone is too long", () => {
    expect(truncateTail("1\n2\n3\n4", { maxLines: 2 })).to.deep.include({
      content: "3\n4",
      truncatedBy: "lines",
    });
    expect(truncateTail("aaaa\nbbbb\ncccc", { maxBytes: 10 })).to.deep.include({
      content: "bbbb\ncccc",
      truncatedBy: "bytes",
      lastLinePartial: false,
    });
    const partial = truncateTail(`head\n${"é".repeat(10)}`, { maxBytes: 5 });
    // 5 bytes would split an "é"; the cut starts on the next character boundary.
    expect(partial).to.deep.include({ content: "éé", lastLinePartial: true, outputLines: 1, outputBytes: 4 });
  });

  it("truncateLine cuts a long line and says how much is missing; formatSize reads like the tools' notices", () => {
    expect(truncateLine("short")).to.deep.equal({ text: "short", wasTruncated: false });
    expect(truncateLine("x".repeat(12), 10)).to.deep.equal({
      text: `${"x".repeat(10)}… [2 more characters]`,
      wasTruncated: true,
    });
    expect(truncateLine("y".repeat(600)).text).to.have.length(500 + "… [100 more characters]".length);
    expect([formatSize(512), formatSize(50 * 1024), formatSize(1.5 * 1024 * 1024)]).to.deep.equal([
      "512 B",
      "50.0 KB",
      "1.5 MB",
    ]);
  });
});
