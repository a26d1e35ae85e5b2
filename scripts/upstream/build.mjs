// Bundles tools-list.ts with upstream's sources (its ?raw Markdown imports
// as text) so that plain Node runs it.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';

const raw = {
    name: 'raw',
    setup(b) {
        b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: new URL(args.path.replace(/\?raw$/, ''), 'file://' + args.resolveDir + '/').pathname, namespace: 'raw' }));
        b.onLoad({ filter: /.*/, namespace: 'raw' }, (args) => ({ contents: readFileSync(args.path, 'utf8'), loader: 'text' }));
    },
};
// The Apps' pages (a virtual module upstream's Vite build makes) are not
// part of tools/list.
const appHTML = {
    name: 'app-html',
    setup(b) {
        b.onResolve({ filter: /^virtual:siyuan-mcp-app-html$/ }, (args) => ({ path: args.path, namespace: 'app-html' }));
        b.onLoad({ filter: /.*/, namespace: 'app-html' }, () => ({ contents: 'export default ""; export const html = "";', loader: 'js' }));
    },
};
await build({
    entryPoints: ['tools-list.ts'], bundle: true, platform: 'node', format: 'esm', outfile: 'tools-list.mjs', plugins: [raw, appHTML],
    loader: { '.md': 'text' }, define: { __PLUGIN_VERSION__: '"upstream"' }, logLevel: 'warning',
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
});
