import { createHmac, timingSafeEqual } from 'node:crypto';

/** Who a tile token is issued to: the user, their access generation, and the session it came from. */
export interface TileGrant {
  userId: number;
  /** users.access_generation when the token was issued. */
  generation: number;
  /** The session's id (sessions.id); the token carries a prefix of it. */
  sessionId: string;
}

/** What a verified token says, for the revocation check (TileAccess). */
export interface TileClaims {
  imageId: number;
  userId: number;
  generation: number;
  /** The first SESSION_REF_LENGTH characters of the session's id. */
  sessionRef: string;
  expiresMs: number;
}

/** Characters of the session id a token carries: enough to name it, useless to log in with. */
export const SESSION_REF_LENGTH = 24;

export function sessionRefOf(sessionId: string): string {
  return sessionId.slice(0, SESSION_REF_LENGTH);
}

/**
 * Tile access tokens: issued with an image (GET /api/images/{id}) to a user who may see it, and
 * checked on every tile request without a database round trip: the HMAC here, the revocation
 * (session ended, access generation bumped) from the tile server's memory (TileAccess). A separate
 * tile host with the same secret verifies them too.
 * Format: `{imageId}.{userId}.{generation}.{sessionRef}.{expiresAtSeconds}.{hmac}` (base64url HMAC).
 */
export class TileTokens {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('lamina:tile-token:v2').digest();
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }

  issue(imageId: number, grant: TileGrant, ttlSeconds: number, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + ttlSeconds;
    const body = `${imageId}.${grant.userId}.${grant.generation}.${sessionRefOf(grant.sessionId)}.${expires}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The token's claims when it was issued for this image and has not expired; else null. */
  verify(token: string | undefined, imageId: number, now = Date.now()): TileClaims | null {
    if (!token || token.length > 300) return null;
    const parts = token.split('.');
    if (parts.length !== 6) return null;
    const [img, user, generation, ref, exp, mac] = parts as [string, string, string, string, string, string];
    if (Number(img) !== imageId || !/^\d{1,10}$/.test(user) || !/^\d{1,10}$/.test(generation)) return null;
    if (!/^[0-9a-f]{24}$/.test(ref) || !/^\d{1,12}$/.test(exp)) return null;
    if (Number(exp) * 1000 < now) return null;
    const expected = Buffer.from(this.mac(parts.slice(0, 5).join('.')));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    return {
      imageId,
      userId: Number(user),
      generation: Number(generation),
      sessionRef: ref,
      expiresMs: Number(exp) * 1000,
    };
  }
}
