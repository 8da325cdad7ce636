import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { contentSecurityPolicy } from '../src/platform/http/securityHeaders.js';

/** The page policy's connect-src with the configuration of `env`. */
function connectSrc(env: Record<string, string>): string {
  const policy = contentSecurityPolicy(loadConfig(env, '/tmp'));
  return /connect-src ([^;]*)/.exec(policy)?.[1] ?? '';
}

// With STORAGE=s3 the browser PUTs the slide to a signed URL of the bucket (XHR: connect-src).
// Before, connect-src was 'self' (and the tile origin) only, so every S3 deployment whose bucket
// is not on the app's origin refused the upload in the browser.
describe('connect-src and the bucket of signed upload URLs', () => {
  it("is 'self' with local storage (uploads go to the app's own routes)", () => {
    expect(connectSrc({})).toBe("'self'");
  });

  it('names S3_ENDPOINT’s origin (MinIO, another host)', () => {
    expect(connectSrc({ STORAGE: 's3', S3_BUCKET: 'slides', S3_ENDPOINT: 'http://minio.example:9000/' })).toBe(
      "'self' http://minio.example:9000",
    );
  });

  it('names AWS’s bucket host without S3_ENDPOINT, virtual-hosted or path-style', () => {
    expect(connectSrc({ STORAGE: 's3', S3_BUCKET: 'slides', S3_REGION: 'eu-west-1' })).toBe(
      "'self' https://slides.s3.eu-west-1.amazonaws.com",
    );
    expect(
      connectSrc({ STORAGE: 's3', S3_BUCKET: 'slides', S3_REGION: 'eu-west-1', S3_FORCE_PATH_STYLE: 'true' }),
    ).toBe("'self' https://s3.eu-west-1.amazonaws.com");
  });

  it('keeps the tile origin, once', () => {
    expect(
      connectSrc({
        STORAGE: 's3',
        S3_BUCKET: 'slides',
        S3_ENDPOINT: 'https://tiles.example',
        TILE_SERVER_LOCATION: 'https://tiles.example/base',
      }),
    ).toBe("'self' https://tiles.example");
  });
});
