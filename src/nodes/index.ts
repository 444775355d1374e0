/** Nodes that stay there (Curator's `PersistentNode`). @module */
export { PersistentNode, type PersistentNodeEvents, type PersistentNodeMode, type PersistentNodeOptions, type PersistentNodeWaitOptions } from './persistent-node.js';
