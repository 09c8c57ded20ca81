// Reads every endpoint's addresses and readiness out of a SLICES message's text without parsing
// it: the backbone bench taps every SliceChanged in its own process, beside cluster-sim and on
// the pipeline's two cores, and a full JSON.parse of each one (whole slices) was the bench's
// largest cost. Only endpoints have `addresses` and `conditions` (a flat object), one of each,
// in whatever key order the message has (the relay's come back from jsonb, keys reordered): the
// k-th of one belongs with the k-th of the other. When the counts differ, the text is parsed.

const ADDRESSES = '"addresses":';
const CONDITIONS = '"conditions":';

/** The text between `open` and `close` after each `key` (whitespace allowed before `open`). */
function spans(text: string, key: string, open: string, close: string): string[] {
  const out: string[] = [];
  for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + 1)) {
    let i = at + key.length;
    while (text.charCodeAt(i) === 32) i++;
    if (text[i] !== open) continue;
    const end = text.indexOf(close, i);
    if (end === -1) break;
    out.push(text.slice(i + 1, end));
  }
  return out;
}

/** [address, ready] for every address of every endpoint in `text` (ready unless it says false). */
export function endpointsOfText(text: string): [string, boolean][] {
  const lists = spans(text, ADDRESSES, '[', ']');
  const conditions = spans(text, CONDITIONS, '{', '}');
  if (lists.length !== conditions.length) return parsedEndpoints(text);
  const out: [string, boolean][] = [];
  for (const [i, list] of lists.entries()) {
    const c = conditions[i] ?? '';
    const r = c.indexOf('"ready":');
    const ready = r === -1 || c.slice(r + 8).trimStart()[0] !== 'f';
    for (const quoted of list.split(',')) {
      const ip = quoted.trim().slice(1, -1);
      if (ip !== '') out.push([ip, ready]);
    }
  }
  return out;
}

function parsedEndpoints(text: string): [string, boolean][] {
  const body = JSON.parse(text) as { upserts?: { endpoints: { addresses: string[]; conditions?: { ready?: boolean } }[] }[] };
  return (body.upserts ?? []).flatMap((s) => s.endpoints.flatMap((ep) => ep.addresses.map((ip): [string, boolean] => [ip, ep.conditions?.ready !== false])));
}
