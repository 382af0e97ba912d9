const m = globalThis.__k6adapter.modules['k6/timers'];
export default m;
export const { setTimeout, clearTimeout, setInterval, clearInterval } = m;
