export { SessionCatalog } from 'dsh-session-reference/edge';
import { createEdgeWorker } from 'dsh-session-reference/edge';
export default createEdgeWorker();
