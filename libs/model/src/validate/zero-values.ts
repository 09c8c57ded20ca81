// The API server decodes JSON into Go structs. A plain (non-pointer) field that holds its zero
// value ("" for a string, 0 for a number, false for a bool) looks exactly like one that was never
// sent, so every client may send either and the server treats both as unset, applying its
// defaults. A pointer field (*string, *int32, *bool in the Go types) is different: there "" or 0
// is a value the server validates, and is kept. These helpers mark the plain fields at the call
// site, so a reader sees which rule applies; see docs/rules.md, F.13.

/** A plain Go string field: `""` is unset. */
export const unsetIfEmpty = (v: unknown): unknown => (v === '' ? undefined : v);

/** A plain Go integer field: `0` is unset. */
export const unsetIfZero = (v: unknown): unknown => (v === 0 ? undefined : v);

/** A plain Go bool field: `false` is unset. */
export const unsetIfFalse = (v: unknown): unknown => (v === false ? undefined : v);
