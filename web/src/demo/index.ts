/**
 * The demo's own cards, registered by form name. `main.tsx` imports this module in one line;
 * a project without the demo deletes that line and this folder, and every form gets the
 * generic card. Your own card: `registerFormCard("<your form>", YourCard, isYourForm)`.
 */
import { registerFormCard } from "../components/cards/registry";
import { FlightBookingCard } from "./FlightBookingCard";
import { FLIGHT_BOOKING, isFlightBookingForm } from "./guards";

registerFormCard(FLIGHT_BOOKING, FlightBookingCard, isFlightBookingForm);
