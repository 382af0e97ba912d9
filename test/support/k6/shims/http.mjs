const m = globalThis.__k6adapter.modules['k6/http'];
export default m;
export const { request, get, post, put, patch, del, head, setResponseCallback, expectedStatuses } = m;
