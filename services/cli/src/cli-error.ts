// Errors that are the user's to fix (bad flags, unreadable input): exit code 2, one line.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}
