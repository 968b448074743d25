/** The steering, follow-up and next-turn queues: delivery order, what hosts see, what clearing returns. */

import { expect } from "chai";
import type { CustomMessage, UserMessage } from "../../../kernel/index.js";
import { MessageQueues, type QueueSnapshot } from "../../../plugins/agent-loop/message-queues.js";

const user = (text: string): UserMessage => ({ role: "user", content: text, timestamp: 0 });
const custom = (text: string): CustomMessage => ({
  role: "custom",
  customType: "note",
  content: [{ type: "text", text }],
  display: true,
  timestamp: 0,
});

describe("message queues", () => {
  let seen: QueueSnapshot[];
  let queues: MessageQueues;
  beforeEach(() => {
    seen = [];
    queues = new MessageQueues((snapshot) => seen.push(snapshot));
  });

  it("announces each enqueued message with the texts of both queues", () => {
    queues.enqueue("followUp", user("later"));
    queues.enqueue("steering", custom("now"));
    expect(seen).to.deep.equal([
      { steering: [], followUp: ["later"] },
      { steering: ["now"], followUp: ["later"] },
    ]);
    expect(queues.hasPending()).to.equal(true);
  });

  it("hands steering and follow-ups over in arrival order and announces the emptied queue", () => {
    queues.enqueue("steering", user("a"));
    queues.enqueue("steering", user("b"));
    queues.enqueue("followUp", user("c"));
    seen = [];
    expect(queues.takeSteering().map((m) => m.content)).to.deep.equal(["a", "b"]);
    expect(seen).to.deep.equal([{ steering: [], followUp: ["c"] }]);
    expect(queues.takeFollowUps().map((m) => m.content)).to.deep.equal(["c"]);
    expect(seen.at(-1)).to.deep.equal({ steering: [], followUp: [] });
    expect(queues.hasPending()).to.equal(false);
  });

  it("stays silent when a take finds nothing", () => {
    expect(queues.takeSteering()).to.deep.equal([]);
    expect(queues.takeFollowUps()).to.deep.equal([]);
    expect(seen).to.deep.equal([]);
  });

  it("clears the visible queues, returning what they held, and keeps next-turn messages", () => {
    queues.enqueue("steering", user("s"));
    queues.enqueue("followUp", user("f"));
    queues.deferToNextTurn(custom("memo"));
    expect(queues.clear()).to.deep.equal({ steering: ["s"], followUp: ["f"] });
    expect(seen.at(-1)).to.deep.equal({ steering: [], followUp: [] });
    expect(queues.hasPending()).to.equal(false);
    expect(queues.takeNextTurn().map((m) => m.customType)).to.deep.equal(["note"]);
    expect(queues.takeNextTurn()).to.deep.equal([]);
  });

  it("announces nothing when clearing empty queues", () => {
    expect(queues.clear()).to.deep.equal({ steering: [], followUp: [] });
    expect(seen).to.deep.equal([]);
  });

  it("keeps next-turn messages out of what hosts see", () => {
    queues.deferToNextTurn(custom("one"), custom("two"));
    expect(queues.snapshot()).to.deep.equal({ steering: [], followUp: [] });
    expect(queues.hasPending()).to.equal(false);
    expect(seen).to.deep.equal([]);
    expect(queues.takeNextTurn().map((m) => m.content)).to.deep.equal([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "two" }],
    ]);
  });
});
