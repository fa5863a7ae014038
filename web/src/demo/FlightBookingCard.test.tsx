import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { registeredForms } from "../components/cards/registry";
import type { FormRequest } from "../contracts/generated";
import { showForm } from "../test/formCard";
import { isFlightBookingForm } from "./guards";
import "./index";

afterEach(cleanup);

const flightForm: FormRequest = {
  type: "form",
  form: "flight-booking",
  title: "Book Berlin → Lisbon on 2026-12-18 (economy 89)",
  context: { flight_id: "FR8364", origin: "Berlin", destination: "Lisbon", date: "2026-12-18", price: 89 },
  agent: "booking_agent",
  tool_call_id: "call_book",
};

/** The answer schema `book_flight`'s form publishes (FlightBookingAnswer), as the interrupt carries it. */
const flightFormSchema = {
  properties: {
    decision: { enum: ["approve", "cancel"], type: "string" },
    seat_class: { enum: ["economy", "premium", "business"], type: "string" },
    insurance: { type: "boolean" },
  },
  required: ["decision"],
  type: "object",
};

function show(value: FormRequest) {
  return showForm(value, flightFormSchema, "form-f");
}

describe("the demo's flight booking card", () => {
  it("is registered for the flight-booking form, whose guard wants a flight in its context", () => {
    expect(registeredForms()).toContain("flight-booking");
    expect(isFlightBookingForm(flightForm)).toBe(true);
    expect(isFlightBookingForm({ ...flightForm, context: { flight: "LH123" } })).toBe(false);
    expect(isFlightBookingForm({ ...flightForm, form: "other" })).toBe(false);
  });

  it("offers book / don't book, seat class and insurance as radios in words, and sends the answer", async () => {
    const submit = show(flightForm);
    expect(screen.getByTestId("flight-form")).toBeTruthy();
    expect(screen.getByTestId("form-context").textContent).toContain("FR8364");
    expect(screen.getByRole("group", { name: "Seat class" }).textContent).not.toMatch(/[`_]|Answer/);
    const button = screen.getByTestId("form-submit");
    expect(button).toHaveProperty("disabled", true);
    fireEvent.click(screen.getByRole("radio", { name: "Book it" }));
    fireEvent.click(screen.getByRole("radio", { name: "Premium economy" }));
    fireEvent.click(screen.getByRole("radio", { name: "Add travel insurance" }));
    fireEvent.click(button);
    await waitFor(() =>
      expect(submit).toHaveBeenCalledWith("form-f", { decision: "approve", seat_class: "premium", insurance: true }),
    );
  });

  it("don't book sends a cancel and nothing else", async () => {
    const submit = show(flightForm);
    fireEvent.click(screen.getByRole("radio", { name: "Don't book" }));
    expect(screen.getByRole("group", { name: "Seat class" })).toHaveProperty("disabled", true);
    fireEvent.click(screen.getByTestId("form-submit"));
    await waitFor(() => expect(submit).toHaveBeenCalledWith("form-f", { decision: "cancel" }));
  });

  it("a flight-booking form without a flight in its context gets the generic form card", async () => {
    show({ ...flightForm, context: { flight: "LH123", price: 420 } });
    expect(screen.queryByTestId("flight-form")).toBeNull();
    expect(screen.getByTestId("interrupt-card").dataset.kind).toBe("form");
    expect(await screen.findByLabelText(/seat_class/)).toBeTruthy(); // the form's code loads on first use
  });
});
