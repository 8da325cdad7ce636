import { runTileProcess } from './modules/tiles/tileProcessChild.js';

// The tile process that a server with the tiles role and another starts beside itself
// (TILE_PROCESS=separate, the default of `npm start`): modules/tiles/tileProcess.ts. Not run by hand.
runTileProcess().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
