// JSON texts of statements whose rows and messages hold the same objects: the slicer's commit
// carries each written slice twice (its endpoint_slices row and the SLICES message queued in the
// outbox), and a slice of a 100-endpoint group is ~28 KB of JSON. Serialising it once per commit
// took half of the 6.8 s the slicer spent building that statement in the backbone bench.

/** Each object's JSON text, made once per object (objects are immutable values here). */
export class JsonTexts {
  readonly #texts = new Map<object, string>();

  of(value: object): string {
    let text = this.#texts.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      this.#texts.set(value, text);
    }
    return text;
  }

  /**
   * JSON.stringify(value), with every object this holds a text for (at any depth) written as
   * that text instead of being serialised again. Key order and spacing are JSON.stringify's.
   */
  stringify(value: unknown): string {
    if (this.#texts.size === 0) return JSON.stringify(value);
    // A placeholder no string in `value` can contain: JSON escapes control characters, and the
    // nonce is not known to whoever wrote the data.
    const nonce = `\u0001${Math.random().toString(36).slice(2)}:`;
    const held: string[] = [];
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v !== 'object' || v === null) return v;
      const t = this.#texts.get(v);
      if (t === undefined) return v;
      held.push(t);
      return `${nonce}${held.length - 1}`;
    });
    if (held.length === 0) return text;
    const quoted = JSON.stringify(nonce).slice(0, -1); // the opening quote and the escaped nonce
    let out = '';
    let from = 0;
    for (let at = text.indexOf(quoted); at >= 0; at = text.indexOf(quoted, from)) {
      const end = text.indexOf('"', at + quoted.length);
      out += text.slice(from, at) + held[Number(text.slice(at + quoted.length, end))];
      from = end + 1;
    }
    return out + text.slice(from);
  }

  /** `{...fields, [key]: value}` as JSON, with `value`'s text reused (fields must not hold `key`). */
  objectWith(fields: Readonly<Record<string, unknown>>, key: string, value: object): string {
    const head = JSON.stringify(fields);
    return `${head.length > 2 ? `${head.slice(0, -1)},` : '{'}${JSON.stringify(key)}:${this.of(value)}}`;
  }
}
