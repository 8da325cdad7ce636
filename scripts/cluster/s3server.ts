/**
 * s3rver (the S3-compatible server from npm the server's tests use) as a process of its own, as
 * the object store is in a deployment: `node --import tsx s3server.ts DIR BUCKET PORT`. Prints
 * `s3rver listening on PORT` once it answers; stops on SIGTERM.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './nginx.js';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

const [directory, bucket, port] = process.argv.slice(2);
if (!directory || !bucket || !port) throw new Error('usage: s3server.ts DIR BUCKET PORT');
// A dev dependency of the server package (its S3 tests use it too).
const S3rver = createRequire(path.join(ROOT, 'packages', 'server', 'package.json'))('s3rver') as S3rverConstructor;
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port: listening } = await server.run();
console.log(`s3rver listening on ${listening}`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
