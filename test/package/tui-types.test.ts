/**
 * `@knightcodeai/cli/tui`'s declarations where the package is installed without pi-tui (it is bundled, not a
 * dependency): an extension that uses pi-tui's Editor, autocomplete types and Markdown through it type-checks
 * strictly. Uses the built dist/ (the test command builds first).
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { useTempDir } from "../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

const EXTENSION = `import type { ExtensionAPI } from "@knightcodeai/cli";
import { asTUI, type AutocompleteProvider, CustomEditor, Editor, getEditorTheme, getMarkdownTheme, Markdown } from "@knightcodeai/cli/tui";

const words: AutocompleteProvider = {
  async getSuggestions() {
    return { prefix: "", items: [{ value: "x", label: "x" }] };
  },
  applyCompletion(lines, cursorLine, cursorCol) {
    return { lines, cursorLine, cursorCol };
  },
};

export default function (knightcode: ExtensionAPI) {
  knightcode.on("session_start", (_event, ctx) => {
    ctx.ui.setEditorComponent((tui, theme, keys) => {
      const editor = new CustomEditor(tui, theme, keys);
      editor.setAutocompleteProvider(words);
      return editor;
    });
    ctx.ui.setWidget("count", (tui, theme) => {
      const length: number = new Editor(asTUI(tui), getEditorTheme(theme)).getText().length;
      return new Markdown(String(length), 0, 0, getMarkdownTheme(theme));
    });
  });
}
`;

describe("the package's terminal UI declarations", function () {
  this.timeout(120_000);
  const tmp = useTempDir("kc-tui-types-");

  it("type-check an extension that uses pi-tui through @knightcodeai/cli/tui, with pi-tui not installed", async () => {
    if (!existsSync(join(root, "dist", "tui.d.ts")))
      throw new Error("dist/ is not built: run npm run build first");
    const modules = join(tmp.path, "node_modules");
    const installed = join(modules, "@knightcodeai", "cli");
    mkdirSync(installed, { recursive: true });
    cpSync(join(root, "dist"), join(installed, "dist"), { recursive: true });
    cpSync(join(root, "package.json"), join(installed, "package.json"));
    // The package's other dependencies are there, as npm would install them; pi-tui (a devDependency) is not.
    for (const name of readdirSync(join(root, "node_modules"))) {
      if (name === "@knightcodeai" || name === "@mariozechner" || name.startsWith(".")) continue;
      symlinkSync(join(root, "node_modules", name), join(modules, name));
    }
    tmp.write("package.json", JSON.stringify({ type: "module" }));
    tmp.write("extension.ts", EXTENSION);
    tmp.write(
      "tsconfig.json",
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
        },
        files: ["extension.ts"],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", tmp.path], { cwd: tmp.path }).then(
      () => ({ code: 0, out: "" }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, out: error.stdout ?? "" }),
    );
    expect(result.out).to.equal("");
    expect(result.code).to.equal(0);
  });
});
