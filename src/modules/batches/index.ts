/**
 * What other modules may use of batches besides their service and routes: recording the
 * transparency log's size on a batch (the log's checkpoint), and noting a template's
 * visibility switch in its transaction (the batches' contents then follow it).
 */
export { setLogTreeSize } from './log-size.js';
export { batchVisibility } from './view-sweep.js';
