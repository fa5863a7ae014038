/**
 * The demo's one custom form shape: `travel`'s flight-booking form. The layer's interrupt shapes
 * are told apart in `../interrupts/guards.ts`; this only narrows a form already told apart there.
 */
import type { FlightBookingForm, FlightContext } from "../contracts/generated";
import { isFormRequest, isRecord } from "../interrupts/guards";

/** The name `tools/travel_forms.py` registers the form under (`FlightBookingForm.form`). */
export const FLIGHT_BOOKING: FlightBookingForm["form"] = "flight-booking";

function isFlightContext(value: unknown): value is FlightContext {
  return (
    isRecord(value) &&
    typeof value.flight_id === "string" &&
    typeof value.origin === "string" &&
    typeof value.destination === "string" &&
    typeof value.date === "string" &&
    typeof value.price === "number"
  );
}

/** A flight-booking form whose context is a flight (the card shows it; anything else gets the generic form card). */
export function isFlightBookingForm(value: unknown): value is FlightBookingForm {
  return isFormRequest(value) && value.form === FLIGHT_BOOKING && isFlightContext(value.context);
}
