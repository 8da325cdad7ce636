import { describe, expect, it } from 'vitest';
import { importedNames, isBarrel } from './routeChunks';

describe('routeChunks: what a module takes from a barrel (issue 28)', () => {
  it('knows a barrel: only `export … from` lines and comments, one a line', () => {
    const barrel = (code: string) => isBarrel({ code, importedIds: ['./a.ts'] });
    expect(barrel("export * from './roles.js';\nexport * from './permissions.js';\n")).toBe(true);
    expect(barrel("// the package's names\nexport { a, b as c } from './a.js'\n\n")).toBe(true);
    expect(barrel("export * from './a.js';\nexport const B = 1;\n")).toBe(false);
    expect(barrel("import './a.js';\nexport * from './a.js';\n")).toBe(false);
    expect(isBarrel({ code: '', importedIds: [] })).toBe(false);
    expect(isBarrel({ code: null, importedIds: ['./a.ts'] })).toBe(false);
  });

  it('reads the names each specifier gives, dropping `as` and `type`', () => {
    const names = importedNames(
      [
        'import { ROUTE_PERMISSIONS, hasAny as any, type Permission } from "@lamina/domain";',
        "import { MESSAGES } from '@lamina/domain';",
        'import { useQuery } from "@tanstack/react-query";',
        'export { CASE_STATUSES } from "@lamina/domain";',
      ].join('\n'),
    );
    expect(names.get('@lamina/domain')).toEqual(
      new Set(['ROUTE_PERMISSIONS', 'hasAny', 'Permission', 'MESSAGES', 'CASE_STATUSES']),
    );
    expect(names.get('@tanstack/react-query')).toEqual(new Set(['useQuery']));
  });

  it('takes everything from a specifier imported whole: namespace, default, `export *`', () => {
    expect(importedNames('import * as domain from "@lamina/domain";').get('@lamina/domain')).toBe('all');
    expect(importedNames('import React, { useState } from "react";').get('react')).toBe('all');
    expect(importedNames('import { a } from "x";\nexport * from "x";').get('x')).toBe('all');
  });
});
