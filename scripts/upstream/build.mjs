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
await build({
    entryPoints: ['tools-list.ts'], bundle: true, platform: 'node', format: 'esm', outfile: 'tools-list.mjs', plugins: [raw],
    loader: { '.md': 'text' }, define: { __PLUGIN_VERSION__: '"upstream"' }, logLevel: 'warning',
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
});
