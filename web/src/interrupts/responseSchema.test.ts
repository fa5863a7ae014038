// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { perCallSchema } from "../test/fixtures";
import { allowedDecisionsFromSchema, batchedDecisionNode, editArgsSchema } from "./responseSchema";

describe("response_schema reading", () => {
  it("lists the decisions of a discriminated union, through $refs", () => {
    expect(allowedDecisionsFromSchema(perCallSchema)).toEqual(["approve", "edit", "reject"]);
  });

  it("a one-decision schema is a plain branch", () => {
    const only = { properties: { type: { const: "respond", type: "string" }, message: { type: "string" } }, type: "object" };
    expect(allowedDecisionsFromSchema(only)).toEqual(["respond"]);
  });

  it("finds the edit branch's args schema and keeps $defs for nested refs", () => {
    const args = editArgsSchema(perCallSchema);
    expect(args?.properties).toEqual({ path: { type: "string", title: "Path" } });
    expect(args?.$defs).toBe(perCallSchema.$defs);
    const noEdit = { ...perCallSchema, oneOf: [{ $ref: "#/$defs/ApproveDecision" }] };
    expect(editArgsSchema(noEdit)).toBeNull();
  });

  it("reads a batched tuple schema position by position", () => {
    const batchedSchema = {
      $defs: perCallSchema.$defs,
      properties: {
        decisions: {
          type: "array",
          prefixItems: [{ oneOf: [{ $ref: "#/$defs/ApproveDecision" }] }, { oneOf: perCallSchema.oneOf }],
        },
      },
    };
    expect(allowedDecisionsFromSchema(batchedSchema, batchedDecisionNode(batchedSchema, 0))).toEqual(["approve"]);
    expect(editArgsSchema(batchedSchema, batchedDecisionNode(batchedSchema, 1))?.required).toEqual(["path"]);
    expect(batchedDecisionNode(batchedSchema, 2)).toBeNull();
  });

  it("reads a batched schema with every branch inline, as the server publishes it", () => {
    const inlineSchema = {
      properties: {
        decisions: {
          type: "array",
          prefixItems: [
            {
              discriminator: { propertyName: "type" },
              oneOf: [
                { properties: { type: { const: "approve", type: "string" } }, type: "object" },
                {
                  properties: {
                    type: { const: "edit", type: "string" },
                    edited_action: {
                      properties: {
                        name: { const: "pay_invoice", type: "string" },
                        args: { properties: { amount: { type: "number" } }, required: ["amount"], type: "object" },
                      },
                      type: "object",
                    },
                  },
                  type: "object",
                },
              ],
            },
          ],
        },
      },
    };
    const node = batchedDecisionNode(inlineSchema, 0);
    expect(allowedDecisionsFromSchema(inlineSchema, node)).toEqual(["approve", "edit"]);
    expect(editArgsSchema(inlineSchema, node)?.required).toEqual(["amount"]);
  });
});
