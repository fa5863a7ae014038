/**
 * Turns what a refused request leaves behind into the sentence the reviewer reads.
 * `/threads/{id}/commands` answers HTTP 200 `{"type": "error", "message": "403: ..."}` when
 * it refuses a resume; the SDK raises that as a `ProtocolError` whose `response` is the
 * envelope. Plain HTTP failures arrive as `HTTPError` ("HTTP 403: <body>") or `ApiError`.
 */
import { isRecord } from "../interrupts/guards";

export interface ErrorEnvelope {
  type: "error";
  message: string;
  error?: string;
}

export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  return isRecord(value) && value.type === "error" && typeof value.message === "string";
}

/** The server's `detail`/`message` out of a JSON body, or the body itself. */
function detailOf(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed)) {
      for (const key of ["detail", "message", "error"]) {
        const value = parsed[key];
        if (typeof value === "string" && value) return value;
      }
    }
  } catch {
    // not JSON: the body is the message
  }
  return body;
}

/**
 * Whether the engine refused an answer because it does not hold that interrupt yet: the card came
 * from the stream while the run that asked was still ending, and `/threads/{id}/commands` reads the
 * thread's interrupts of before that run until it has ended. Nothing was saved; the same answer may
 * be sent again.
 */
export function isUnsettledInterrupt(error: unknown): boolean {
  const envelope = isErrorEnvelope(error) ? error : isRecord(error) && isErrorEnvelope(error.response) ? error.response : null;
  return envelope?.error === "no_such_interrupt";
}

export function describeError(error: unknown): string {
  if (isErrorEnvelope(error)) return error.message;
  if (isRecord(error) && isErrorEnvelope(error.response)) return error.response.message;
  if (error instanceof Error) {
    const status = (error as { status?: unknown }).status;
    const text = (error as { text?: unknown }).text;
    if (typeof status === "number" && typeof text === "string" && text) {
      return `${status}: ${detailOf(text)}`;
    }
    return error.message || error.name;
  }
  if (typeof error === "string") return error;
  return "Unexpected error";
}
