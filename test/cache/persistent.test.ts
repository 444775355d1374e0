// The caches' shared behaviour suite (test/cache/suite.ts) with every cache in 'persistent' watch mode,
// on one standalone server of this file's own.
import { cacheSuite } from './suite.js';

cacheSuite('persistent');
