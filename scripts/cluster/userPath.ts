/** The user's steps through the load balancer that the simulation and the benchmark share. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ImageView } from '@lamina/domain';
import { getBytes, type Client, type Counters } from './client.js';
import { sleep } from './cluster.js';

export interface Study {
  id: number;
  name: string;
}

/** The browser's upload: a signed URL, the PUT straight to the bucket, the registration. */
export async function uploadSlide(uploader: Client, studyId: number, file: string): Promise<number> {
  const name = path.basename(file);
  const signed = await uploader.expect<{ data: { urls: { signedUrl: string; s3Key: string }[] } }>(
    200,
    'POST',
    '/api/signed-urls',
    { studyId, fileNames: [name] },
  );
  const target = signed.data.urls[0];
  if (!target) throw new Error('no signed URL');
  if (!target.signedUrl.startsWith(uploader.base))
    throw new Error(`the signed URL is not on the app's origin: ${new URL(target.signedUrl).origin}`);
  // The browser's PUT, straight to the bucket (through nginx's bucket location, not an api process).
  const put = await fetch(target.signedUrl, { method: 'PUT', body: readFileSync(file) });
  uploader.counters.requests++;
  if (!put.ok) throw new Error(`PUT to the signed URL: ${put.status} ${await put.text()}`);
  const { image } = await uploader.expect<{ image: ImageView }>(200, 'POST', '/api/images', {
    name,
    s3Key: target.s3Key,
    studyId,
  });
  return image.id;
}

/** Polls the image until a worker has built its pyramid. */
export async function waitProcessed(client: Client, imageId: number, seconds: number): Promise<ImageView> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const image = await client.expect<ImageView>(200, 'GET', `/api/images/${imageId}`);
    if (image.processingStatus === 'SUCCESS') return image;
    if (image.processingStatus === 'FAIL') throw new Error(`image ${imageId} failed: ${image.statusMessage ?? ''}`);
    if (Date.now() > deadline) throw new Error(`image ${imageId} not processed within ${seconds} s`);
    await sleep(500);
  }
}

/** Tile URLs (z/x/y, with the token) that answer 200: x and y below `span` at every level. */
export async function tilePaths(image: ImageView, counters: Counters, base: string, span = 2): Promise<string[]> {
  if (!image.tileUrl) throw new Error('no tile URL');
  const paths: string[] = [];
  for (let z = 0; z <= (image.maxTmsZoom ?? 0); z++) {
    for (let i = 0; i < span * span; i++) {
      const x = i % span;
      const y = Math.floor(i / span);
      const url = new URL(
        image.tileUrl.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)),
        base,
      ).toString();
      const tile = await getBytes(url, counters, 'viewer');
      if (tile.status === 200 && tile.type.startsWith('image/') && tile.bytes > 0) paths.push(url);
    }
  }
  return paths;
}
