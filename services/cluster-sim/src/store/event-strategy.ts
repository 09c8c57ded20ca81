// Events (core/v1, also served as events.k8s.io/v1): upstream's validation, which depends on
// the API the write came through. Every write passes the legacy checks (the event's namespace
// matches its object's; new-style events, those with an eventTime, name their reporter, action
// and reason within length limits). Writes through events.k8s.io/v1 are held to more: a
// subdomain name, eventTime, type Normal or Warning, no deprecated fields on create, and
// immutable fields on update. Unlike most objects, Events carry no generation.
import { fieldInvalid, fieldRequired } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { KubeObj } from './types.ts';
import { isRecord, nameProblem } from './validation.ts';

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
export const ACTION_LENGTH_LIMIT = 128;
export const REASON_LENGTH_LIMIT = 128;
export const NOTE_LENGTH_LIMIT = 1024;

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_HELP = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** Problems with `value` as a Kubernetes qualified name (`[prefix/]name`), in upstream's words. */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) return [`a qualified name ${QUALIFIED_NAME_HELP} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const name = parts[parts.length - 1]!;
  const problems: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') problems.push('prefix part must be non-empty');
    else {
      const bad = nameProblem(prefix, 'subdomain');
      if (bad) problems.push(`prefix part ${bad}`);
    }
  }
  if (name === '') problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (name !== '' && !QUALIFIED_NAME_PART.test(name)) problems.push(`name part ${QUALIFIED_NAME_HELP}`);
  return problems;
}

const STRING_FIELDS = ['reason', 'message', 'type', 'action', 'reportingComponent', 'reportingInstance'];

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const isZeroTime = (v: unknown): boolean => v === undefined || v === null || v === '';
const record = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

function shapeCauses(obj: KubeObj): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const f of STRING_FIELDS) {
    if (obj[f] !== undefined && obj[f] !== null && typeof obj[f] !== 'string') causes.push(fieldInvalid(f, obj[f], 'must be a string'));
  }
  for (const f of ['involvedObject', 'source', 'series', 'related']) {
    if (obj[f] !== undefined && obj[f] !== null && !isRecord(obj[f])) causes.push(fieldInvalid(f, obj[f], 'must be an object'));
  }
  const count = obj['count'];
  if (count !== undefined && count !== null && !Number.isInteger(count)) causes.push(fieldInvalid('count', count, 'must be an integer'));
  return causes;
}

function legacyCauses(obj: KubeObj): StatusCause[] {
  const causes: StatusCause[] = [];
  const namespace = obj.metadata.namespace ?? '';
  const involvedNamespace = text(record(obj['involvedObject'])['namespace']);
  const mismatch = (): void => void causes.push(fieldInvalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
  if (isZeroTime(obj['eventTime'])) {
    // Old-style events (client-go's core recorder): the namespaces agree, or the object is
    // cluster-scoped and the event lives in "default".
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) mismatch();
    return causes;
  }
  if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') mismatch();
  const controller = text(obj['reportingComponent']);
  if (controller === '') causes.push(fieldRequired('reportingController'));
  for (const problem of qualifiedNameProblems(controller)) causes.push(fieldInvalid('reportingController', controller, problem));
  const limited = (field: string, value: string, limit: number, required: boolean): void => {
    if (required && value === '') causes.push(fieldRequired(field));
    if (value.length > limit) causes.push(fieldInvalid(field, '', `can have at most ${limit} characters`));
  };
  limited('reportingInstance', text(obj['reportingInstance']), REPORTING_INSTANCE_LENGTH_LIMIT, true);
  limited('action', text(obj['action']), ACTION_LENGTH_LIMIT, true);
  limited('reason', text(obj['reason']), REASON_LENGTH_LIMIT, true);
  limited('message', text(obj['message']), NOTE_LENGTH_LIMIT, false);
  return causes;
}

function seriesCauses(obj: KubeObj): StatusCause[] {
  const series = obj['series'];
  if (!isRecord(series)) return [];
  const causes: StatusCause[] = [];
  const count = series['count'];
  if (typeof count !== 'number' || count < 2) causes.push(fieldInvalid('series.count', '', 'should be at least 2'));
  if (isZeroTime(series['lastObservedTime'])) causes.push(fieldRequired('series.lastObservedTime'));
  return causes;
}

function strictCreateCauses(obj: KubeObj): StatusCause[] {
  const causes: StatusCause[] = [];
  const nameIssue = nameProblem(obj.metadata.name, 'subdomain');
  if (nameIssue) causes.push(fieldInvalid('metadata.name', obj.metadata.name, nameIssue));
  causes.push(...seriesCauses(obj));
  if (isZeroTime(obj['eventTime'])) causes.push(fieldRequired('eventTime'));
  const type = text(obj['type']);
  if (type !== 'Normal' && type !== 'Warning') causes.push(fieldInvalid('type', '', `has invalid value: ${type}`));
  if (!isZeroTime(obj['firstTimestamp'])) causes.push(fieldInvalid('firstTimestamp', '', 'needs to be unset'));
  if (!isZeroTime(obj['lastTimestamp'])) causes.push(fieldInvalid('lastTimestamp', '', 'needs to be unset'));
  if (obj['count'] !== undefined && obj['count'] !== null && obj['count'] !== 0) causes.push(fieldInvalid('count', '', 'needs to be unset'));
  const source = record(obj['source']);
  if (text(source['component']) !== '' || text(source['host']) !== '') causes.push(fieldInvalid('source', '', 'needs to be unset'));
  return causes;
}

/** Fields an update through events.k8s.io/v1 may not change (core paths, as upstream reports them). */
const IMMUTABLE: readonly (readonly [path: string, field: string])[] = [
  ['involvedObject', 'involvedObject'], ['reason', 'reason'], ['message', 'message'], ['source', 'source'],
  ['firstTimestamp', 'firstTimestamp'], ['lastTimestamp', 'lastTimestamp'], ['count', 'count'], ['type', 'type'],
  ['eventTime', 'eventTime'], ['action', 'action'], ['related', 'related'],
  ['reportingController', 'reportingComponent'], ['reportingInstance', 'reportingInstance'],
];

function strictUpdateCauses(obj: KubeObj, prev: KubeObj, same: (a: unknown, b: unknown) => boolean): StatusCause[] {
  const causes: StatusCause[] = same(obj['series'], prev['series']) ? [] : seriesCauses(obj);
  for (const [path, field] of IMMUTABLE) {
    if (!same(normalizeEventField(field, obj[field]), normalizeEventField(field, prev[field]))) causes.push(fieldInvalid(path, obj[field] ?? null, 'field is immutable'));
  }
  return causes;
}

export interface EventValidation {
  /** The write came through events.k8s.io/v1 (strict) rather than core/v1. */
  readonly strict: boolean;
  /** The stored event on update. */
  readonly prev?: KubeObj;
  readonly same: (a: unknown, b: unknown) => boolean;
}

export function eventCauses(obj: KubeObj, how: EventValidation): StatusCause[] {
  const shape = shapeCauses(obj);
  if (shape.length > 0) return shape;
  const causes = legacyCauses(obj);
  if (!how.strict) return causes;
  return [...causes, ...(how.prev ? strictUpdateCauses(obj, how.prev, how.same) : strictCreateCauses(obj))];
}

// The zero value a field has once stored (Go writes structs as {} and unset times as null).
function normalizeEventField(field: string, value: unknown): unknown {
  switch (field) {
    case 'involvedObject': case 'source': return value ?? {};
    case 'firstTimestamp': case 'lastTimestamp': case 'eventTime': return value ?? null;
    case 'reportingComponent': case 'reportingInstance': return value ?? '';
    case 'count': return value === 0 ? undefined : value;
    default: return value;
  }
}

/** The event as stored: Go's zero values filled in, a zero count dropped. */
export function completeEvent(obj: KubeObj): KubeObj {
  const out: Record<string, unknown> = { ...obj };
  for (const field of ['involvedObject', 'source', 'firstTimestamp', 'lastTimestamp', 'eventTime', 'reportingComponent', 'reportingInstance', 'count']) {
    const value = normalizeEventField(field, obj[field]);
    if (value === undefined) delete out[field];
    else out[field] = value;
  }
  return out as unknown as KubeObj;
}

/** The `source` field label: the old source component, else the reporting controller. */
export function eventSourceField(obj: KubeObj): string {
  return text(record(obj['source'])['component']) || text(obj['reportingComponent']);
}
