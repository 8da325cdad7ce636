import type { TileClaims, TileTokens } from '../../platform/tiles/tileToken.js';

/**
 * Remembers tile tokens already verified, so the HMAC is computed once per token rather than once
 * per tile (a viewer sends the same token with every tile of an image). Only tokens that verified
 * enter, so forged ones cannot fill it; each entry still expires with its token. Bounded: the
 * oldest entries go first. Revocation is not cached here: the responder asks TileAccess each time.
 */
export class VerifiedTokens {
  private readonly verified = new Map<string, TileClaims>();

  constructor(
    private readonly tokens: TileTokens,
    private readonly maxEntries = 10_000,
  ) {}

  verify(token: string | undefined, imageId: number, now = Date.now()): TileClaims | null {
    if (!token) return null;
    const known = this.verified.get(token);
    if (known) return known.imageId === imageId && known.expiresMs >= now ? known : null;
    const claims = this.tokens.verify(token, imageId, now);
    if (!claims) return null;
    if (this.verified.size >= this.maxEntries) {
      const oldest = this.verified.keys().next();
      if (!oldest.done) this.verified.delete(oldest.value);
    }
    this.verified.set(token, claims);
    return claims;
  }
}
