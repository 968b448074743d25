// pi-tui catches this and carries on: Windows consoles then report Shift+Tab as Tab.
throw new Error("koffi is not installed with KnightCode");
