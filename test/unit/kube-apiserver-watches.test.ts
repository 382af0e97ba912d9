import { parseSelector } from '../../local/kube-apiserver/selectors';
import { Store, type WatchEvent } from '../../local/kube-apiserver/store';

// As kube-apiserver's watch cache sends them: a watch with a label selector sees an object that
// stops matching as DELETED and one that starts matching as ADDED, live and when replayed from a
// resourceVersion. The operator's caches select namespaces by its managed-by label, so a
// namespace it lets go (D-276) must leave them.
describe('test API server: a watch with a label selector', () => {
  it('sees an object leave (DELETED, as it was) and come back (ADDED), live and replayed', () => {
    const store = new Store();
    const t = store.typeOf('', 'v1', 'namespaces');
    const relabel = (labels: Record<string, string>) => store.patch(t, undefined, 'mi-a', (live) => ({ ...live, metadata: { ...(live.metadata as object), labels } }), 'test', 'main');
    const from = store.resourceVersion;
    store.create(t, undefined, { metadata: { name: 'mi-a', labels: { owner: 'op' } } }, 'test');
    const live: WatchEvent[] = [];
    store.watch(t, undefined, parseSelector('owner=op'), store.resourceVersion, (e) => live.push(e));
    relabel({ owner: 'op', v: '2' });
    relabel({ v: '2' });
    relabel({ v: '3' });
    relabel({ owner: 'op' });
    const shown = (events: WatchEvent[]) =>
      events.map((e) => {
        const m = e.object.metadata as { labels?: Record<string, string>; resourceVersion: string };
        return `${e.type} ${m.resourceVersion} ${JSON.stringify(m.labels ?? {})}`;
      });
    const rv = (n: number) => String(Number(from) + n);
    const expected = [
      `MODIFIED ${rv(2)} {"owner":"op","v":"2","kubernetes.io/metadata.name":"mi-a"}`,
      `DELETED ${rv(3)} {"owner":"op","v":"2","kubernetes.io/metadata.name":"mi-a"}`,
      `ADDED ${rv(5)} {"owner":"op","kubernetes.io/metadata.name":"mi-a"}`,
    ];
    expect(shown(live)).toEqual(expected);
    const replayed: WatchEvent[] = [];
    store.watch(t, undefined, parseSelector('owner=op'), rv(1), (e) => replayed.push(e));
    expect(shown(replayed)).toEqual(expected);
  });
});
