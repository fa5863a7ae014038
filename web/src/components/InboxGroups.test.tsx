import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { groupName, groupOptions } from "../present/inboxGroups";
import { GroupCounts } from "./GroupCounts";
import { GroupFilter } from "./GroupFilter";
import { WaitingForMe } from "./WaitingForMe";

const counts = { reviewer: 3, supervisor: 2, owner: 1 };

function optionsOf(select: HTMLElement): [string, string][] {
  return [...select.querySelectorAll("option")].map((option) => [option.value, option.textContent ?? ""]);
}

describe("the inbox's groups in words", () => {
  it("All first with the whole inbox, then each group in the server's order; owner is the caller's own questions", () => {
    expect(groupOptions(counts, "")).toEqual([
      { value: "", label: "All (6)" },
      { value: "reviewer", label: "reviewer (3)" },
      { value: "supervisor", label: "supervisor (2)" },
      { value: "owner", label: "your own questions (1)" },
    ]);
    expect(groupName("finance")).toBe("finance");
  });

  it("a chosen group the counts no longer name stays an option, with 0; no counts leaves All (0)", () => {
    expect(groupOptions({ reviewer: 2 }, "supervisor").map((o) => o.label)).toEqual(["All (2)", "reviewer (2)", "supervisor (0)"]);
    expect(groupOptions({}, "")).toEqual([{ value: "", label: "All (0)" }]);
  });
});

describe("GroupFilter", () => {
  it("offers All and each group of the counts with its count, shows the chosen one, and reports a choice", () => {
    const onChange = vi.fn();
    render(<GroupFilter counts={counts} value="supervisor" onChange={onChange} testId="group" />);
    const select = screen.getByTestId("group") as HTMLSelectElement;
    expect(optionsOf(select)).toEqual([
      ["", "All (6)"],
      ["reviewer", "reviewer (3)"],
      ["supervisor", "supervisor (2)"],
      ["owner", "your own questions (1)"],
    ]);
    expect(select.value).toBe("supervisor");
    expect(screen.getByLabelText("Filter by group")).toBe(select);

    fireEvent.change(select, { target: { value: "owner" } });
    fireEvent.change(select, { target: { value: "" } });
    expect(onChange.mock.calls).toEqual([["owner"], [""]]);
  });
});

describe("WaitingForMe", () => {
  it("is a labelled checkbox that reports on and off", () => {
    const onChange = vi.fn();
    const { rerender } = render(<WaitingForMe checked={false} onChange={onChange} testId="mine" />);
    const box = screen.getByRole("checkbox", { name: "Waiting for me" }) as HTMLInputElement;
    expect(box.checked).toBe(false);
    fireEvent.click(box);
    expect(onChange).toHaveBeenLastCalledWith(true);

    rerender(<WaitingForMe checked onChange={onChange} testId="mine" />);
    expect((screen.getByTestId("mine") as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByTestId("mine"));
    expect(onChange).toHaveBeenLastCalledWith(false);
  });
});

describe("GroupCounts", () => {
  it("names each group with how many wait for it, in the server's order", () => {
    render(<GroupCounts counts={counts} testId="counts" />);
    const items = within(screen.getByTestId("counts")).getAllByRole("listitem");
    expect(items.map((item) => [item.dataset.group, item.textContent])).toEqual([
      ["reviewer", "reviewer: 3"],
      ["supervisor", "supervisor: 2"],
      ["owner", "your own questions: 1"],
    ]);
  });

  it("shows nothing without counts (a server that sends none)", () => {
    render(<GroupCounts counts={{}} testId="counts" />);
    expect(screen.queryByTestId("counts")).toBeNull();
  });
});
