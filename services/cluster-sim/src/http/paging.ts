// `limit` / `continue` for lists. A continue token remembers the resourceVersion of the
// first page and the last key returned; later pages report that first resourceVersion, so a
// watch started from it replays anything that changed while paging (at worst twice, never
// missed). A token older than the retained history is answered with 410, as upstream does.
import { badRequest, expired } from '../store/api-error.ts';
import { keyOf } from '../store/types.ts';
import type { KubeObj } from '../store/types.ts';

export interface Page {
  readonly items: readonly KubeObj[];
  readonly resourceVersion: string;
  readonly continueToken?: string;
  readonly remainingItemCount?: number;
}

interface Token {
  readonly rv: number;
  readonly after: string;
}

export function encodeContinue(token: Token): string {
  return Buffer.from(JSON.stringify({ v: 1, rv: token.rv, after: token.after })).toString('base64url');
}

export function decodeContinue(text: string): Token {
  try {
    const raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { v?: unknown; rv?: unknown; after?: unknown };
    if (raw.v === 1 && typeof raw.rv === 'number' && typeof raw.after === 'string') return { rv: raw.rv, after: raw.after };
  } catch {
    // fall through to the 400 below
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

/**
 * One page of `sorted` (objects in key order). `limit` 0/undefined returns everything.
 * `historyFloor` is the oldest resourceVersion still consistent for this kind.
 */
export function pageOf(
  sorted: readonly KubeObj[],
  currentRV: number,
  historyFloor: number,
  limit: number | undefined,
  continueText: string | undefined,
): Page {
  let rv = currentRV;
  let start = 0;
  if (continueText) {
    const token = decodeContinue(continueText);
    if (token.rv < historyFloor) {
      throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    }
    rv = token.rv;
    start = sorted.findIndex((o) => keyOf(o) > token.after);
    if (start < 0) start = sorted.length;
  }
  if (!limit || limit <= 0 || start + limit >= sorted.length) return { items: sorted.slice(start), resourceVersion: String(rv) };
  const items = sorted.slice(start, start + limit);
  return {
    items,
    resourceVersion: String(rv),
    continueToken: encodeContinue({ rv, after: keyOf(items[items.length - 1]!) }),
    remainingItemCount: sorted.length - start - limit,
  };
}
