const m = globalThis.__k6adapter.modules['k6/metrics'];
export default m;
export const { Counter, Gauge, Rate, Trend } = m;
