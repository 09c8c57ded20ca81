// Errors that are the user's to fix (a point outside the log, a malformed file, an unknown
// Service): the CLI prints the message on one line and exits 2.

export class HistoryInputError extends Error {
  override readonly name = 'HistoryInputError';
}
