const m = globalThis.__k6adapter.modules['k6'];
export default m;
export const { check, group, sleep, fail } = m;
