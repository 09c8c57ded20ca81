// Where rejected KUBE messages go: `dlq.<cluster>.slicer` on the DLQ stream, one dead letter per
// KUBE sequence (its msgID), so a redelivered rejection is stored once.

import type { JetStreamClient, StreamNames } from '@slicemesh/nats';
import { dlqSubject, publishDeadLetter } from '@slicemesh/nats';
import type { Clock } from '@slicemesh/runtime';
import type { DeadLetterSink } from './ports.ts';

export function natsDeadLetters(js: JetStreamClient, cluster: string, names: StreamNames, clock: Clock): DeadLetterSink {
  const subject = dlqSubject(cluster, 'slicer', names);
  return {
    publish: async (letter) => {
      await publishDeadLetter(
        js,
        subject,
        {
          reason: letter.reason,
          ...(letter.field !== undefined ? { field: letter.field } : {}),
          object: letter.raw,
          subject: letter.subject,
          at: new Date(clock.now()).toISOString(),
        },
        { msgID: `${cluster}/slicer/${names.kube}/${letter.seq}` },
      );
    },
  };
}
