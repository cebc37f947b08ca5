// The two ways herdr's CLI fails: a server-side error envelope (stderr, exit 1) and a
// usage error (plain text on stderr, exit 2). Keeping them as types lets every command
// simply throw and leaves the output format to the entry point.

export class ApiError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class UsageError extends Error {}
