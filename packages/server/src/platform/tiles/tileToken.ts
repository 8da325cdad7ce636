import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Tile access tokens: issued with an image (GET /api/images/{id}) to a user who may see it, and
 * checked on every tile request without a database round trip. A separate tile host with the same
 * secret verifies them too. Format: `{imageId}.{userId}.{expiresAtSeconds}.{hmac}` (base64url HMAC).
 */
export class TileTokens {
  constructor(private readonly secret: string) {}

  private mac(imageId: number, userId: number, expires: number): string {
    return createHmac('sha256', this.secret).update(`tile:${imageId}:${userId}:${expires}`).digest('base64url');
  }

  issue(imageId: number, userId: number, ttlSeconds: number, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + ttlSeconds;
    return `${imageId}.${userId}.${expires}.${this.mac(imageId, userId, expires)}`;
  }

  /** True when the token was issued for this image and has not expired. */
  verify(token: string | undefined, imageId: number, now = Date.now()): boolean {
    if (!token || token.length > 200) return false;
    const parts = token.split('.');
    if (parts.length !== 4) return false;
    const [img, user, exp, mac] = parts as [string, string, string, string];
    if (Number(img) !== imageId || !/^\d+$/.test(user) || !/^\d+$/.test(exp)) return false;
    if (Number(exp) * 1000 < now) return false;
    const expected = Buffer.from(this.mac(imageId, Number(user), Number(exp)));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
