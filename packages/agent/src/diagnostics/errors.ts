// The ways a language server fails to answer, told apart by the service (service.ts).

/** No answer within the time given (the server may still be working). */
export class DiagnosticsTimeout extends Error {}
/** The server's process ended (crashed, killed, or its pipes closed). */
export class ServerGone extends Error {}

export function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}
