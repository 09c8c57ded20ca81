// Putting a dead letter's original message back on its subject, after the cause was fixed. The
// message id names the dead letter, so redriving the same letter twice within the stream's
// duplicate window stores it once.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { PublishResult } from './publish.ts';
import { publishAcked } from './publish.ts';

export interface Redrive {
  /** The subject the rejected message was consumed from. */
  readonly subject: string;
  /** Its body, parsed from the dead letter's text. */
  readonly body: unknown;
  /** The DLQ stream and the letter's sequence in it. */
  readonly dlqStream: string;
  readonly dlqSeq: number;
}

/** Republishes one dead letter's message; throws PublishError when the stream refuses it. */
export async function redriveDeadLetter(js: JetStreamClient, r: Redrive): Promise<PublishResult> {
  return publishAcked(js, r.subject, r.body, { msgID: `redrive/${r.dlqStream}/${r.dlqSeq}` });
}
