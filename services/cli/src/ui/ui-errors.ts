// The web view's errors that are the caller's to fix: the routes answer them with 400 or 404 and
// the message, anything else with 500.

/** A point, a flag value or a query parameter that cannot be understood (HTTP 400). */
export class UiInputError extends Error {
  override readonly name = 'UiInputError';
}

/** A Service, a node or a path that does not exist at the point asked for (HTTP 404). */
export class UiNotFoundError extends Error {
  override readonly name = 'UiNotFoundError';
}
