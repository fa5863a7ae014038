/**
 * The demo's flight-booking form (`travel`'s `book_flight`) as a flight card: where and when, then
 * book or cancel, seat class and insurance as radio buttons in words. Answers
 * `{decision, seat_class, insurance}` (or a cancel). Registered by `./index.ts`.
 */
import { useState, type FormEvent } from "react";
import { CardFrame } from "../components/cards/CardFrame";
import type { FormCardProps } from "../components/cards/registry";
import type { FlightBookingAnswer, FlightBookingForm } from "../contracts/generated";
import { isRecord } from "../interrupts/guards";
import { resolveRef, type JsonSchema } from "../interrupts/responseSchema";
import { humanizeKey } from "../present/summaries";
import "./demo.css";

type SeatClass = NonNullable<FlightBookingAnswer["seat_class"]>;

const SEAT_LABELS: Record<string, string> = { economy: "Economy", premium: "Premium economy", business: "Business" };
const DEFAULT_SEATS: SeatClass[] = ["economy", "premium", "business"];

/** The seat classes the form's response_schema offers (an enum, maybe behind a `$ref`). */
export function seatClassesOf(schema: JsonSchema | null): string[] {
  const props = schema && isRecord(schema.properties) ? schema.properties : null;
  const node = schema && props ? resolveRef(schema, props.seat_class) : null;
  const options = node?.enum;
  return Array.isArray(options) && options.every((o) => typeof o === "string") ? options : DEFAULT_SEATS;
}

export function FlightBookingCard({ item, value, submit, busy }: FormCardProps<FlightBookingForm>) {
  const flight = value.context;
  const [decision, setDecision] = useState<FlightBookingAnswer["decision"] | null>(null);
  const [seat, setSeat] = useState<string>("economy");
  const [insurance, setInsurance] = useState(false);
  const disabled = busy || item.status.phase === "sending";
  const name = (field: string) => `${item.id}-${field}`;

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!decision) return;
    void submit(item.id, decision === "cancel" ? { decision } : { decision, seat_class: seat, insurance });
  };

  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      subject={value.form}
      title={value.title}
      agent={value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <div className="flight" data-testid="form-context">
        <p className="flight-route">
          <span>{flight.origin}</span>
          <span aria-label="to"> → </span>
          <span>{flight.destination}</span>
        </p>
        <dl className="flight-facts">
          <div>
            <dt>Flight</dt>
            <dd data-testid="flight-id">{flight.flight_id}</dd>
          </div>
          <div>
            <dt>Date</dt>
            <dd>{flight.date}</dd>
          </div>
          <div>
            <dt>Economy fare</dt>
            <dd>{flight.price}</dd>
          </div>
        </dl>
      </div>
      <form className="flight-form" onSubmit={onSubmit} data-testid="flight-form">
        <fieldset disabled={disabled}>
          <legend>Book this flight?</legend>
          <label>
            <input type="radio" name={name("decision")} checked={decision === "approve"} onChange={() => setDecision("approve")} />
            Book it
          </label>
          <label>
            <input type="radio" name={name("decision")} checked={decision === "cancel"} onChange={() => setDecision("cancel")} />
            Don't book
          </label>
        </fieldset>
        <fieldset disabled={disabled || decision === "cancel"}>
          <legend>Seat class</legend>
          {seatClassesOf(item.responseSchema).map((option) => (
            <label key={option}>
              <input type="radio" name={name("seat")} checked={seat === option} onChange={() => setSeat(option)} />
              {SEAT_LABELS[option] ?? humanizeKey(option)}
            </label>
          ))}
        </fieldset>
        <fieldset disabled={disabled || decision === "cancel"}>
          <legend>Travel insurance</legend>
          <label>
            <input type="radio" name={name("insurance")} checked={!insurance} onChange={() => setInsurance(false)} />
            No insurance
          </label>
          <label>
            <input type="radio" name={name("insurance")} checked={insurance} onChange={() => setInsurance(true)} />
            Add travel insurance
          </label>
        </fieldset>
        <button type="submit" className="primary" disabled={disabled || !decision} data-testid="form-submit">
          {decision === "cancel" ? "Confirm: don't book" : decision === "approve" ? "Confirm booking" : "Choose book or don't book"}
        </button>
      </form>
    </CardFrame>
  );
}
