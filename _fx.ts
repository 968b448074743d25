import { startChatServer, writeLocalRunFixture } from "./bench/cli-fixture.js";
const dir = "/tmp/kc/fx"; 
const s = await startChatServer();
const agent = writeLocalRunFixture(dir, s.url);
console.log(agent);
setTimeout(() => process.exit(0), 3 * 3600_000);
