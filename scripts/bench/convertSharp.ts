/**
 * Child process of bench:convert: builds the serving pyramid exactly as the processing worker does
 * (readTiffStructure → describeSlide → buildPyramid) and prints the elapsed time as JSON.
 * usage: node --import tsx scripts/bench/convertSharp.ts SOURCE TARGET
 */
import { buildPyramid } from '../../packages/server/src/modules/processing/pyramid.js';
import { describeSlide } from '../../packages/server/src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../../packages/server/src/modules/processing/tiffStructure.js';

const [source, target] = process.argv.slice(2);
if (!source || !target) throw new Error('usage: convertSharp.ts SOURCE TARGET');
const started = performance.now();
const info = describeSlide(await readTiffStructure(source));
await buildPyramid(source, target, info);
const ms = performance.now() - started;
console.log(`CONVERT_JSON ${JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024 })}`);
