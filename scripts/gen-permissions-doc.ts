// Writes docs/PERMISSIONS.md from the domain package (the code is the source; the doc cannot drift:
// a domain test fails when the committed file differs from what this prints).
import { writeFileSync } from 'node:fs';
import { renderPermissionsDoc } from '../packages/domain/src/permissionsDoc.js';

writeFileSync(new URL('../docs/PERMISSIONS.md', import.meta.url), renderPermissionsDoc());
console.log('docs/PERMISSIONS.md written');
