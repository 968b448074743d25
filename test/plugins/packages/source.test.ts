import { expect } from "chai";
import { parsePackageSource } from "../../../plugins/packages/source.js";

describe("package sources", () => {
  it("npm: a name, a scope and a version pin; the identity ignores the version", () => {
    expect(parsePackageSource("npm:@scope/pkg@1.2.3", "/")).to.include({
      kind: "npm",
      name: "@scope/pkg",
      version: "1.2.3",
      pinned: true,
      identity: "npm:@scope/pkg",
    });
    expect(parsePackageSource("npm:pkg", "/")).to.include({
      name: "pkg",
      pinned: false,
      identity: "npm:pkg",
    });
    expect(parsePackageSource("npm:pkg@file:/tmp/a@b/pkg.tgz", "/")).to.include({
      name: "pkg",
      version: "file:/tmp/a@b/pkg.tgz",
    });
  });

  it("git: shorthand, https, ssh, scp-like and file URLs, with a ref pin", () => {
    expect(parsePackageSource("git:github.com/user/repo@v1", "/")).to.include({
      kind: "git",
      url: "https://github.com/user/repo",
      ref: "v1",
      location: "github.com/user/repo",
      pinned: true,
      identity: "git:https://github.com/user/repo",
    });
    expect(parsePackageSource("https://github.com/user/repo.git", "/")).to.include({
      url: "https://github.com/user/repo.git",
      location: "github.com/user/repo",
      pinned: false,
    });
    expect(parsePackageSource("ssh://git@host.example/team/repo@main", "/")).to.include({
      url: "ssh://git@host.example/team/repo",
      ref: "main",
      location: "host.example/team/repo",
    });
    expect(parsePackageSource("git@github.com:user/repo", "/")).to.include({
      url: "git@github.com:user/repo",
      location: "github.com/user/repo",
    });
    expect(parsePackageSource("file:///tmp/repos/x@abc123", "/")).to.include({
      url: "file:///tmp/repos/x",
      ref: "abc123",
      location: "local/tmp/repos/x",
    });
  });

  it("local paths resolve against the base folder and are never pinned", () => {
    expect(parsePackageSource("./pkgs/a", "/home/u")).to.include({
      kind: "local",
      path: "/home/u/pkgs/a",
      identity: "local:/home/u/pkgs/a",
      pinned: false,
    });
  });

  it("refuses unknown forms and malformed sources, naming the accepted forms", () => {
    expect(() => parsePackageSource("svn:host/x", "/")).to.throw(
      /unknown package source "svn:host\/x".*npm:<name>/,
    );
    expect(() => parsePackageSource("npm:Bad Name", "/")).to.throw(/npm:<name>\[@version\]/);
    expect(() => parsePackageSource("git:nohost", "/")).to.throw(/git:<host>\/<path>/);
    expect(() => parsePackageSource("git:host/../etc", "/")).to.throw(/\.\./);
  });
});
