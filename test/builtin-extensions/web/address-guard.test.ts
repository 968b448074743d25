/** webfetch's address guard: which addresses count as private, loopback, link-local or reserved, in every form. */
import { expect } from "chai";
import { refusedAddressKind } from "../../../builtin-extensions/web/address-guard.js";

describe("builtin:web address guard", () => {
  it("names loopback, private, link-local and reserved IPv4 and IPv6 addresses", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "a loopback address"],
      ["127.255.0.9", "a loopback address"],
      ["::1", "a loopback address"],
      ["10.0.0.1", "a private address"],
      ["172.31.255.255", "a private address"],
      ["192.168.1.1", "a private address"],
      ["169.254.169.254", "a link-local address"],
      ["fe80::1", "a link-local address"],
      ["fd12:3456::1", "a private (unique local) address"],
      ["100.64.0.1", "a carrier-grade NAT address"],
      ["0.0.0.0", "an unspecified (this network) address"],
      ["::", "an unspecified address"],
      ["224.0.0.251", "a multicast address"],
      ["ff02::1", "a multicast address"],
      ["255.255.255.255", "a reserved address"],
    ];
    for (const [address, kind] of cases) expect(refusedAddressKind(address), address).to.equal(kind);
  });

  it("sees IPv4 addresses inside IPv6 forms: mapped, compatible, NAT64 and 6to4", () => {
    expect(refusedAddressKind("::ffff:127.0.0.1")).to.equal("a loopback address");
    expect(refusedAddressKind("::ffff:a9fe:a9fe")).to.equal("a link-local address");
    expect(refusedAddressKind("::10.0.0.1")).to.equal("a private address");
    expect(refusedAddressKind("64:ff9b::c0a8:101")).to.equal("a private address");
    expect(refusedAddressKind("2002:7f00:1::1")).to.equal("a loopback address");
  });

  it("lets public addresses through", () => {
    for (const address of [
      "1.1.1.1",
      "93.184.215.14",
      "172.32.0.1",
      "2606:4700:4700::1111",
      "64:ff9b::808:808",
    ])
      expect(refusedAddressKind(address), address).to.equal(undefined);
  });
});
