// @vitest-environment node
/// <reference types="node" />
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IconNames, IconSize } from '@blueprintjs/icons';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { APP_ICON_PATHS_20 } from './appIconPaths20';
import { APP_ICONS, APP_ICON_PATHS_16, loadAppIcon } from './appIcons';

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ICON_NAMES: ReadonlySet<string> = new Set(Object.values(IconNames));

/**
 * Whether a string literal goes to Blueprint as an icon: its contextual type is Blueprint's
 * IconName (the union of every name, as `icon` props, `Record<…, IconName>` and `icon: IconName`
 * fields take it) or a narrower union of icon names (`icon: 'move' | 'archive'`). A single literal
 * type (an event's name) is not.
 */
function isIconType(type: ts.Type): boolean {
  const members = type.isUnion() ? type.types : [type];
  const names = members.filter((m): m is ts.StringLiteralType => m.isStringLiteral()).map((m) => m.value);
  return names.length >= 2 && names.every((name) => ICON_NAMES.has(name));
}

/** Every icon name the web sources (tests aside) give Blueprint, with where: found by the type checker. */
function iconsInSources(): Map<string, string> {
  const config = ts.readConfigFile(path.join(WEB, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, WEB);
  const files = parsed.fileNames.filter((file) => !/\.test\.tsx?$/.test(file) && !file.includes('/src/test/'));
  const program = ts.createProgram(files, parsed.options);
  const checker = program.getTypeChecker();
  const found = new Map<string, string>();
  for (const source of program.getSourceFiles()) {
    if (!files.includes(source.fileName) || source.fileName.endsWith('/appIcons.ts')) continue;
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && ICON_NAMES.has(node.text)) {
        const type = checker.getContextualType(node);
        if (type && isIconType(type) && !found.has(node.text)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.set(node.text, `${path.relative(WEB, source.fileName)}:${line}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('the icons the app renders (issue 28)', () => {
  it('appIcons.ts lists exactly the icon names the sources give Blueprint', () => {
    const found = iconsInSources();
    const listed = new Set<string>(APP_ICONS);
    const missing = [...found].filter(([name]) => !listed.has(name)).map(([name, where]) => `${name} (${where})`);
    const unused = APP_ICONS.filter((name) => !found.has(name));
    expect(missing, 'icons the sources use: add them to src/app/appIcons.ts and appIconPaths20.ts').toEqual([]);
    expect(unused, 'icons no source uses any more: remove them from both files').toEqual([]);
    // The scan finds the icons of every kind of use (props, records of IconName, narrower unions).
    expect(found.get('zoom-in')).toMatch(/ViewerControls\.tsx/);
    expect(found.get('cloud-upload')).toMatch(/mldColumns\.tsx/);
    expect(found.get('add-to-folder')).toBeDefined();
  }, 120_000);

  it('has the 20 px paths of the same icons', () => {
    expect(Object.keys(APP_ICON_PATHS_20).sort()).toEqual([...APP_ICONS].sort());
  });

  it('answers a listed icon from the bundle at both sizes, and any other through Blueprint’s own loader', async () => {
    expect(await loadAppIcon('zoom-in', IconSize.STANDARD)).toBe(APP_ICON_PATHS_16['zoom-in']);
    expect(await loadAppIcon('media', IconSize.LARGE)).toBe(APP_ICON_PATHS_20.media);
    expect(APP_ICON_PATHS_16['zoom-in'].length).toBeGreaterThan(0);
    // 'airplane' is not drawn by the app: the fallback still finds its paths.
    expect((await loadAppIcon('airplane', IconSize.STANDARD)).length).toBeGreaterThan(0);
  });
});
