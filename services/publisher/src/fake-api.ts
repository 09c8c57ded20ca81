// An in-memory EndpointSliceApi for unit tests (habit 10: the fake is itself tested, in
// apply.test.ts): resourceVersions, 409 on a stale PUT or a taken name, 404s, delete
// preconditions, and failures scripted per call.

import type { DeletePreconditions, EndpointSliceApi, KubeJson, KubeVerb, SlicePage } from '@slicemesh/kube';
import { KubeWriteError } from '@slicemesh/kube';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

/** A scripted answer to the next call of a verb: an error, or a hook run before the call. */
export type Script = { readonly fail: KubeWriteError } | { readonly before: () => void };

export class FakeSliceApi implements EndpointSliceApi {
  readonly objects = new Map<string, Obj>();
  /** Every call in order, e.g. `create default/a`. */
  readonly calls: string[] = [];
  readonly #scripts = new Map<KubeVerb, Script[]>();
  #rv = 100;
  #uid = 0;

  /** Queues `script` for the next call of `verb`. */
  next(verb: KubeVerb, script: Script): this {
    const list = this.#scripts.get(verb) ?? [];
    list.push(script);
    this.#scripts.set(verb, list);
    return this;
  }

  /** Stores `obj` as if another client created it (fresh uid and resourceVersion). */
  put(obj: KubeJson): Obj {
    const meta = obj['metadata'] as Record<string, unknown>;
    const stored: Obj = { ...(obj as Record<string, unknown>), metadata: { ...meta, uid: meta['uid'] ?? `fake-uid-${++this.#uid}`, resourceVersion: String(++this.#rv) } };
    this.objects.set(`${String(meta['namespace'])}/${String(meta['name'])}`, stored);
    return stored;
  }

  /** Changes the live object as another writer would (its resourceVersion moves). */
  touch(key: string, change: (o: Obj) => Obj = (o) => o): Obj {
    const o = this.objects.get(key);
    if (o === undefined) throw new Error(`no ${key}`);
    const next = change(structuredClone(o));
    next.metadata['resourceVersion'] = String(++this.#rv);
    this.objects.set(key, next);
    return next;
  }

  /** Writes only (creates, replaces, deletes). */
  writes(): string[] {
    return this.calls.filter((c) => !c.startsWith('get ') && !c.startsWith('list '));
  }

  #script(verb: KubeVerb, path: string): void {
    const s = this.#scripts.get(verb)?.shift();
    if (s === undefined) return;
    if ('fail' in s) throw s.fail;
    s.before();
    void path;
  }

  async get(namespace: string, name: string): Promise<KubeJson | undefined> {
    const key = `${namespace}/${name}`;
    this.calls.push(`get ${key}`);
    this.#script('get', key);
    const o = this.objects.get(key);
    return o === undefined ? undefined : structuredClone(o);
  }

  /** Pages in key order; the continue token is the index of the next item. */
  async list(namespace: string, limit: number, continueToken: string): Promise<SlicePage> {
    this.calls.push(`list ${namespace}${continueToken === '' ? '' : ` from ${continueToken}`}`);
    this.#script('list', namespace);
    const all = [...this.objects.entries()].filter(([k]) => k.startsWith(`${namespace}/`)).sort(([a], [b]) => a.localeCompare(b)).map(([, o]) => structuredClone(o));
    const from = continueToken === '' ? 0 : Number(continueToken);
    const next = from + limit;
    return { items: all.slice(from, next), continue: next < all.length ? String(next) : '' };
  }

  async create(slice: KubeJson): Promise<KubeJson> {
    const meta = slice['metadata'] as Record<string, unknown>;
    const key = `${String(meta['namespace'])}/${String(meta['name'])}`;
    this.calls.push(`create ${key}`);
    this.#script('create', key);
    if (this.objects.has(key)) throw new KubeWriteError('create', key, 409, 'AlreadyExists', `endpointslices.discovery.k8s.io "${String(meta['name'])}" already exists`);
    if (meta['resourceVersion'] !== undefined) throw new KubeWriteError('create', key, 400, 'BadRequest', 'resourceVersion should not be set on objects to be created');
    return structuredClone(this.put({ ...slice, metadata: { ...meta, uid: undefined } }));
  }

  async replace(slice: KubeJson): Promise<KubeJson> {
    const meta = slice['metadata'] as Record<string, unknown>;
    const key = `${String(meta['namespace'])}/${String(meta['name'])}`;
    this.calls.push(`replace ${key}`);
    this.#script('replace', key);
    const live = this.objects.get(key);
    if (live === undefined) throw new KubeWriteError('replace', key, 404, 'NotFound', 'not found');
    if (meta['resourceVersion'] !== live.metadata['resourceVersion']) throw new KubeWriteError('replace', key, 409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    const stored: Obj = { ...(slice as Record<string, unknown>), metadata: { ...meta, uid: live.metadata['uid'], resourceVersion: String(++this.#rv) } };
    this.objects.set(key, stored);
    return structuredClone(stored);
  }

  async delete(namespace: string, name: string, pre: DeletePreconditions): Promise<void> {
    const key = `${namespace}/${name}`;
    this.calls.push(`delete ${key}`);
    this.#script('delete', key);
    const live = this.objects.get(key);
    if (live === undefined) throw new KubeWriteError('delete', key, 404, 'NotFound', 'not found');
    if (live.metadata['uid'] !== pre.uid || live.metadata['resourceVersion'] !== pre.resourceVersion) throw new KubeWriteError('delete', key, 409, 'Conflict', 'Precondition failed');
    this.objects.delete(key);
  }
}
