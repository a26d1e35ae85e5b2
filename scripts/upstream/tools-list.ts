// Measures the upstream TypeScript Sisyphus's tools/list answer for a given
// set of tools and actions (strict mode on), as its server builds it. Run
// by scripts/tools-list-size inside an upstream checkout; not part of the
// Go build.
import { readFileSync } from 'node:fs';
import { buildDefaultToolConfig, TOOL_CATEGORIES } from './src/core/config';
import { listAllTools } from './src/core/tool-registry';
import { decorateToolsWithMcpApps } from './src/core/mcp-apps';

const want: Record<string, string[]> = JSON.parse(readFileSync(process.argv[2], 'utf8')).actions;
const config: any = buildDefaultToolConfig();
config.writeSafety.strictMode = true;
const missing: string[] = [];
for (const cat of TOOL_CATEGORIES) {
    const c = config[cat];
    c.enabled = cat in want;
    for (const a of Object.keys(c.actions)) c.actions[a] = (want[cat] ?? []).includes(a);
}
for (const [cat, actions] of Object.entries(want)) {
    for (const a of actions) if (!(cat in config) || !(a in config[cat].actions)) missing.push(`${cat}.${a}`);
}
const tools = listAllTools(config, undefined as any);
const answer = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { tools } });
const perTool: Record<string, number> = {};
for (const t of tools) perTool[t.name] = JSON.stringify(t).length;
// The MCP Apps' tools a client that declares the extension gets besides
// (every App and App action on, as upstream's defaults).
const appTools: Record<string, number> = {};
for (const t of decorateToolsWithMcpApps(tools, true, config.mcpApps).slice(tools.length)) appTools[t.name] = JSON.stringify(t).length;
console.log(JSON.stringify({ bytes: Buffer.byteLength(answer), tokens: Math.floor(Buffer.byteLength(answer) / 4), perTool, appTools, notUpstream: missing }, null, 2));
