/// <reference types="node" />
import path from 'node:path';
import { rolldown } from 'rolldown';
import type { OutputBundle, OutputChunk } from 'rolldown';
import type { Plugin } from 'vite';
import type { ViewerAssets } from '../src/lib/earlyStart';

/** The viewer routes' pages, whose files the early script preloads on those routes. */
const VIEWER_PAGES: Record<keyof ViewerAssets, string> = {
  image: 'src/features/viewer/ImageViewerPage.tsx',
  case: 'src/features/viewer/CaseViewerPage.tsx',
};

type ChunkWithCss = OutputChunk & { viteMetadata?: { importedCss?: Set<string> } };

function chunks(bundle: OutputBundle): ChunkWithCss[] {
  return Object.values(bundle).filter((file): file is ChunkWithCss => file.type === 'chunk');
}

/** A chunk's file, the files it imports statically (all the way down), and their styles. */
function closure(bundle: OutputBundle, start: ChunkWithCss): string[] {
  const seen = new Set<string>();
  const css = new Set<string>();
  const visit = (fileName: string) => {
    if (seen.has(fileName)) return;
    seen.add(fileName);
    const chunk = bundle[fileName] as ChunkWithCss | undefined;
    if (chunk?.type !== 'chunk') return;
    for (const sheet of chunk.viteMetadata?.importedCss ?? []) css.add(sheet);
    for (const imported of chunk.imports) visit(imported);
  };
  visit(start.fileName);
  return [...seen, ...css];
}

/**
 * The files each viewer route needs beyond what index.html already loads (the entry chunk, what it
 * imports, their styles), as URLs under `base`, the page's own chunk first.
 */
export function viewerAssetsOf(bundle: OutputBundle, root: string, base = '/'): ViewerAssets {
  const entry = chunks(bundle).find((c) => c.isEntry);
  const loaded = new Set(entry ? closure(bundle, entry) : []);
  const assets: ViewerAssets = { image: [], case: [] };
  for (const [kind, page] of Object.entries(VIEWER_PAGES) as [keyof ViewerAssets, string][]) {
    const file = path.resolve(root, page);
    // The page's own chunk, or the chunk a code-splitting group put it in (vitePlugins/routeChunks.ts).
    const chunk = chunks(bundle).find((c) => c.facadeModuleId === file || c.moduleIds.includes(file));
    if (!chunk) throw new Error(`earlyStart: no chunk for ${page}; is it still loaded lazily by the router?`);
    assets[kind] = closure(bundle, chunk)
      .filter((f) => !loaded.has(f))
      .map((f) => `${base}${f}`);
  }
  return assets;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
}

/** Builds src/early.ts into one small classic script (an IIFE, minified). */
export async function buildEarlyScript(root: string): Promise<string> {
  const bundle = await rolldown({ input: path.join(root, 'src/early.ts'), platform: 'browser', logLevel: 'silent' });
  try {
    const { output } = await bundle.generate({ format: 'iife', minify: true });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

/**
 * The script as it can stand inside index.html's `<script>`: a build whose code held `</script` or
 * `<!--` would end the element early or change how the browser parses it.
 */
export function inlineScript(code: string): string {
  if (/<\/script|<!--/i.test(code))
    throw new Error('earlyStart: the early script holds </script or <!--; it cannot be inlined');
  return code.trimEnd();
}

/**
 * The early script (src/early.ts, lib/earlyStart.ts; issue 28): built on its own and written into
 * index.html itself, first in the head, with the viewer routes' files named on its tag
 * (`data-viewer-assets`). It runs as the document is parsed — before any other file has arrived
 * and ahead of the stylesheet, which a script after it would wait for — so the page's data, a
 * viewer's chunks and (from the image's details) its first tiles are requested while the main
 * bundle loads. The server allows it by its hash (Content-Security-Policy, platform/http/webApp.ts
 * inlineScriptSources). Build only: in development the app asks as usual.
 */
export function earlyStart(): Plugin {
  let root = process.cwd();
  let base = '/';
  let code = '';
  return {
    name: 'lamina:early-start',
    apply: 'build',
    configResolved(config) {
      root = config.root;
      base = config.base;
    },
    async buildStart() {
      code = inlineScript(await buildEarlyScript(root));
    },
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        if (!ctx.bundle) return html;
        const assets = escapeAttribute(JSON.stringify(viewerAssetsOf(ctx.bundle, root, base)));
        const tag = `<script data-viewer-assets="${assets}">${code}</script>`;
        // Right after the title: the first thing the page runs, before the files it links.
        if (!html.includes('</title>')) throw new Error('earlyStart: index.html has no <title>');
        return html.replace('</title>', `</title>\n    ${tag}`);
      },
    },
  };
}
