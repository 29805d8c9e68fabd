/**
 * What other modules may use of batches besides their service and routes: recording the
 * transparency log's size on a batch (the log's checkpoint).
 */
export { setLogTreeSize } from './log-size.js';
