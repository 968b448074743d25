/** Prompts on their way in: decided one at a time in arrival order, and a drain that waits for late arrivals. */

import { expect } from "chai";
import { Admissions } from "../../../plugins/agent-loop/admissions.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("admissions", () => {
  it("decides admissions in arrival order even when an earlier one takes longer", async () => {
    const admissions = new Admissions();
    const decided: number[] = [];
    const all = [30, 1, 10].map((ms, i) =>
      admissions.admit(async () => {
        await sleep(ms);
        decided.push(i);
        return undefined;
      }),
    );
    expect(admissions.busy).to.equal(true);
    await Promise.all(all);
    expect(decided).to.deep.equal([0, 1, 2]);
    expect(admissions.busy).to.equal(false);
  });

  it("goes on after an admission that failed, and hands the failure to its caller", async () => {
    const admissions = new Admissions();
    const failed = admissions.admit(async () => {
      throw new Error("refused");
    });
    const next = admissions.admit(async () => ({ ok: true }));
    const error = await failed.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.equal("refused");
    expect(await next).to.deep.equal({ ok: true });
  });

  it("drains only once admissions that arrived during the wait are decided too", async () => {
    const admissions = new Admissions();
    const order: string[] = [];
    void admissions.admit(async () => {
      await sleep(5);
      order.push("first");
      // Arrives while a drain is already waiting.
      void admissions.admit(async () => {
        await sleep(5);
        order.push("late");
        return undefined;
      });
      return undefined;
    });
    await admissions.drained();
    order.push("drained");
    expect(order).to.deep.equal(["first", "late", "drained"]);
  });
});
