/** The provider kit's SSE framing: lines at CR, LF and CRLF, the event cap, and the body an SDK reads. */
import {
  guardedSseFetch,
  guardSseBody,
  SseLineSplitter,
  StreamLineTooLongError,
} from "@knightcodeai/cli/kit";
import { expect } from "chai";
import { startTestServer, type TestServer } from "../../../helpers/sse-server.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function lines(splitter: SseLineSplitter, ...pieces: string[]): Array<[string, boolean]> {
  const seen: Array<[string, boolean]> = [];
  for (const piece of pieces)
    splitter.push(bytes(piece), (line, comment) => seen.push([text(line), comment]));
  splitter.end((line, comment) => seen.push([text(line), comment]));
  return seen;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(text(chunk));
  return chunks;
}

function streamOf(...pieces: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(bytes(piece));
      controller.close();
    },
  });
}

describe("plugins/kit/provider: SseLineSplitter", () => {
  it("splits at LF, CR and CRLF, a CRLF split between reads included, and tells comments apart", () => {
    expect(
      lines(new SseLineSplitter(), "data: a\r", "\ndata: b\rdata: c\n\n: ping\r\n", "data: d"),
    ).to.deep.equal([
      ["data: a", false],
      ["data: b", false],
      ["data: c", false],
      ["", false],
      [": ping", true],
      ["data: d", false],
    ]);
  });

  it("returns where the last complete line ends", () => {
    const splitter = new SseLineSplitter(1024, false);
    expect(splitter.push(bytes("data: partial"))).to.equal(0);
    expect(splitter.push(bytes(" rest\n\ndata: x"))).to.equal(7);
    expect(splitter.push(bytes("\r"))).to.equal(1);
    expect(splitter.push(bytes("\n"))).to.equal(1);
  });

  it("caps an event, its lines together, and counts again after the blank line that ends it", () => {
    const splitter = new SseLineSplitter(20);
    splitter.push(bytes("data: 0123456789\n\n"));
    splitter.push(bytes("data: 0123456789\n\n"));
    expect(() => splitter.push(bytes("data: 01234\ndata: 56789"))).to.throw(
      StreamLineTooLongError,
      "longer than 20 bytes",
    );
    expect(() => new SseLineSplitter(10).push(bytes(`data: ${"x".repeat(100)}`))).to.throw(
      StreamLineTooLongError,
    );
  });
});

describe("plugins/kit/provider: guardSseBody", () => {
  it("passes the bytes on in chunks that end where a line ends", async () => {
    const chunks = await readAll(guardSseBody(streamOf('data: {"a"', ":1}\n\nda", "ta: 2\n", "\n", "tail")));
    expect(chunks).to.deep.equal(['data: {"a":1}\n\n', "data: 2\n", "\n", "tail"]);
  });

  it("fails the body with StreamLineTooLongError once an event passes the cap", async () => {
    let error: unknown;
    try {
      await readAll(guardSseBody(streamOf("data: ok\n\n", `data: ${"x".repeat(64)}`, "x".repeat(64)), 100));
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(StreamLineTooLongError);
  });

  describe("guardedSseFetch", () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it("guards an event-stream answer and leaves any other answer as it came", async () => {
      const fetchGuarded = guardedSseFetch(fetch, 32);
      server.respondInOrder(
        (_req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(`data: ${"x".repeat(100)}\n\n`);
        },
        (_req, res) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ long: "y".repeat(100) }));
        },
      );
      const stream = await fetchGuarded(`${server.url}/sse`);
      expect(stream.status).to.equal(200);
      expect(stream.url).to.equal(`${server.url}/sse`);
      let error: unknown;
      await stream.text().catch((caught: unknown) => {
        error = caught;
      });
      expect(error).to.be.instanceOf(StreamLineTooLongError);
      const json = await fetchGuarded(`${server.url}/json`);
      expect(((await json.json()) as { long: string }).long).to.have.length(100);
    });
  });
});
