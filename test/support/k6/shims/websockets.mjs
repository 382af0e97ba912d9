const m = globalThis.__k6adapter.modules['k6/websockets'];
export default m;
export const { WebSocket } = m;
