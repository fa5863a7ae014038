/**
 * The published contract at run time: `hitl/contracts/schemas/contracts.json` (`make schemas`), compiled
 * by Ajv. Whatever the app checks of what the server hands it — an interrupt's shape, a decision, a
 * receipt, who it is — is checked against this one file; the kinds of interrupt, the roles, the decision
 * types and who answers a shape that names nobody are read from it, never from a list of the app's own.
 * The types of the same definitions are `generated.ts`.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import published from "../../../hitl/contracts/schemas/contracts.json";
import type { DecisionType, InterruptShapes, Owner, RecordedDecision, Role } from "./generated";

type Definitions = Record<string, { [key: string]: unknown }>;

export const CONTRACTS = published as { $defs: Definitions };

const ajv = new Ajv2020({ strict: false });
ajv.addSchema(CONTRACTS, "contracts");
const compiled = new Map<string, ValidateFunction>();

/** The published definition `name` (e.g. `FormRequest`); throws for a name the contract does not publish. */
export function definition(name: string): { [key: string]: unknown } {
  const found = CONTRACTS.$defs[name];
  if (!found) throw new Error(`the published contract has no definition ${name}: run \`make schemas\``);
  return found;
}

/** A type guard that checks a value against the published definition `name` (compiled once). */
export function conforms<T>(name: string): (value: unknown) => value is T {
  definition(name);
  return (value: unknown): value is T => {
    let check = compiled.get(name);
    if (!check) {
      check = ajv.getSchema(`contracts#/$defs/${name}`);
      if (!check) throw new Error(`Ajv could not compile ${name} of the published contract`);
      compiled.set(name, check);
    }
    return check(value) === true;
  };
}

/** Every kind of interrupt the layer sends (`InterruptShapes`), and the definition of its shape. */
export type InterruptKind = keyof InterruptShapes;

function refName(node: unknown): string {
  const ref = typeof node === "object" && node !== null ? (node as { $ref?: unknown }).$ref : undefined;
  if (typeof ref !== "string") throw new Error("InterruptShapes: every kind must name its shape by $ref");
  return ref.slice(ref.lastIndexOf("/") + 1);
}

export const SHAPES: ReadonlyMap<InterruptKind, string> = new Map(
  Object.entries(definition("InterruptShapes").properties as Record<string, unknown>).map(
    ([kind, node]) => [kind as InterruptKind, refName(node)],
  ),
);

/** The name of the published definition of `kind`'s shape (`form` is `FormRequest`). */
export function shapeOf(kind: InterruptKind): string {
  const name = SHAPES.get(kind);
  if (!name) throw new Error(`the published contract has no interrupt kind ${kind}: run \`make schemas\``);
  return name;
}

function enumOf<T extends string>(name: string): readonly T[] {
  const values = definition(name).enum;
  if (!Array.isArray(values)) throw new Error(`${name} of the published contract is no enum`);
  return values as T[];
}

export const DECISION_TYPES = enumOf<DecisionType>("DecisionType");
/** The decider that is no group: the thread's owner, who answers their own questions. */
export const OWNER = definition("Owner").const as Owner;
export const RECORDED_DECISIONS = enumOf<RecordedDecision>("RecordedDecision");
export const ROLES = enumOf<Role>("Role");

/** The published default of a property of a shape (`FormRequest.required_role` is `owner`), or undefined. */
export function defaultOf(name: string, property: string): unknown {
  const properties = definition(name).properties as Record<string, { default?: unknown }> | undefined;
  return properties?.[property]?.default;
}

/** Who answers an interrupt of `kind` that names nobody (`required_role` absent), per its published default. */
export function defaultDecider(kind: InterruptKind): string | undefined {
  const found = defaultOf(shapeOf(kind), "required_role");
  return typeof found === "string" ? found : undefined;
}

/** Where an overdue interrupt of `kind` escalates when it names no group (`escalate_to` absent). */
export function defaultEscalation(kind: InterruptKind): string | undefined {
  const found = defaultOf(shapeOf(kind), "escalate_to");
  return typeof found === "string" ? found : undefined;
}
