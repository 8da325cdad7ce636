-- Tile tokens stop working within seconds of a revocation (issue 10): a token names the session it
-- was issued in and the user's access generation, which is bumped when the user loses access
-- (study access removed, work-as switched, account deactivated). Tile servers keep the live
-- sessions and generations in memory, refreshed every TILE_ACCESS_REFRESH seconds.
ALTER TABLE users ADD COLUMN access_generation integer NOT NULL DEFAULT 0;
