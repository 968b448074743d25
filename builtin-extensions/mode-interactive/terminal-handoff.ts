/**
 * The two keys that give the terminal to something else for a while: ctrl+g hands the message to `$VISUAL` or
 * `$EDITOR` and takes back what was saved, and ctrl+z suspends KnightCode to the shell until `fg` (SIGCONT). Both
 * stop the renderer first, so the terminal is in its normal mode, and draw everything again on return.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writePrivateFileSync } from "@knightcodeai/cli/kit";
import type { App } from "./app.js";

/** The editor command the environment names; a command line with arguments (`code --wait`) is allowed. */
export function externalEditor(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return (env.VISUAL?.trim() || env.EDITOR?.trim()) ?? undefined;
}

/** ctrl+g: the editor's text goes to `$VISUAL`/`$EDITOR` in a temporary file; what is saved comes back. */
export function editExternally(app: App): void {
  const command = externalEditor();
  if (!command) {
    app.notice("ctrl+g edits the message in $VISUAL or $EDITOR; neither is set", "warning");
    return;
  }
  const file = join(tmpdir(), `knightcode-message-${randomUUID()}.md`);
  writePrivateFileSync(file, app.editor.getText());
  app.tui.stop();
  let outcome: { text: string } | { error: string };
  try {
    // Through the shell, as git runs $EDITOR: the variable may hold arguments.
    const run = spawnSync(`${command} "$KNIGHTCODE_EDIT_FILE"`, {
      shell: true,
      stdio: "inherit",
      env: { ...process.env, KNIGHTCODE_EDIT_FILE: file },
    });
    if (run.error) outcome = { error: run.error.message };
    else if (run.status !== 0)
      outcome = { error: `${command} exited with ${run.status ?? run.signal}; the message is unchanged` };
    else outcome = { text: readFileSync(file, "utf8").replace(/\n$/, "") };
  } catch (error) {
    outcome = { error: (error as Error).message };
  } finally {
    rmSync(file, { force: true });
  }
  app.tui.start();
  app.tui.requestRender(true);
  if ("text" in outcome) app.editor.setText(outcome.text);
  else app.notice(outcome.error, "error");
  app.render();
}

/** ctrl+z: stops the whole process group, as a shell's job control expects; `fg` (SIGCONT) draws it all again. */
export function suspend(app: App): void {
  if (process.platform === "win32") {
    app.notice("Windows terminals have no job control: nothing to suspend to", "warning");
    return;
  }
  app.tui.stop();
  // With the terminal stopped nothing else keeps the event loop alive, and a signal listener does not: without
  // this timer the process would end as soon as it is continued, before SIGCONT's listener runs.
  const alive = setInterval(() => {}, 1 << 30);
  process.once("SIGCONT", () => {
    clearInterval(alive);
    app.tui.start();
    app.tui.requestRender(true);
  });
  process.kill(0, "SIGTSTP");
}
