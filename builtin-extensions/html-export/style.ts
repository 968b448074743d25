/** The page's only style sheet, inlined: system fonts, light and dark colours from the reader's preference. */
export const STYLE = `
:root { color-scheme: light dark; --bg: #f6f6f4; --card: #fff; --fg: #1d1d1f; --muted: #6b6b70; --line: #dcdcd8;
  --user: #2457c5; --assistant: #1f7a4a; --tool: #8a5a00; --error: #b3261e; --add: #1f7a4a; --del: #b3261e;
  --code: #f0f0ec; }
@media (prefers-color-scheme: dark) { :root { --bg: #17181b; --card: #1f2024; --fg: #e6e6e3; --muted: #9a9aa0;
  --line: #34353a; --user: #7aa2f7; --assistant: #73c991; --tool: #e0af68; --error: #f7768e; --add: #73c991;
  --del: #f7768e; --code: #26272c; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 64px; }
h1 { font-size: 1.4em; margin: 0 0 8px; word-break: break-word; }
h2 { font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.06em; margin: 0 0 6px; color: var(--muted); }
h2.user { color: var(--user); } h2.assistant { color: var(--assistant); } h2.tool, h2.custom { color: var(--tool); }
.model { text-transform: none; letter-spacing: 0; font-weight: normal; color: var(--muted); }
header.session dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0;
  color: var(--muted); font-size: 0.9em; }
header.session dd { margin: 0; word-break: break-all; }
.entry { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px;
  margin: 12px 0; }
.entry-model_change, .entry-thinking_level_change, .entry-session_info, .entry-context_edit { background: none;
  border: none; padding: 0 14px; margin: 4px 0; }
.entry-compaction, .entry-branch_summary { border-style: dashed; }
pre { margin: 6px 0; padding: 0; white-space: pre-wrap; word-break: break-word; font: inherit; }
pre.output, pre.args, pre.command, pre.diff, pre.rendered, pre.thinking, code {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
pre.output, pre.args, pre.command, pre.diff, pre.rendered { background: var(--code); padding: 8px; border-radius: 6px; }
pre.thinking { color: var(--muted); font-style: italic; }
.tool-block { border-left: 3px solid var(--tool); padding: 2px 0 2px 10px; margin: 8px 0; }
.tool-block.tool-error { border-left-color: var(--error); }
.tool-name { font-weight: 600; color: var(--tool); font-family: ui-monospace, Menlo, Consolas, monospace; }
.tool-arg { font-family: ui-monospace, Menlo, Consolas, monospace; word-break: break-all; }
.diff-add { color: var(--add); } .diff-del { color: var(--del); }
.note, .meta { color: var(--muted); font-size: 0.88em; margin: 4px 0; }
.error { color: var(--error); }
.label { display: inline-block; background: var(--code); border-radius: 4px; padding: 0 6px; font-size: 0.85em;
  margin: 0 0 4px; }
.status-ok { color: var(--add); } .status-error, .status-blocked { color: var(--error); }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.9em; }
.branch-point { border: 1px dashed var(--tool); border-radius: 8px; padding: 8px 14px; margin: 12px 0;
  font-size: 0.9em; }
.branch-point p { margin: 0 0 4px; } .branch-point ul { margin: 0; padding-left: 20px; }
.branch-point li.followed { font-weight: 600; }
img.image { max-width: 100%; border-radius: 6px; margin: 6px 0; }
a { color: inherit; }
`;
