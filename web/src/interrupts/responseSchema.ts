/**
 * Reads an interrupt's `response_schema` (JSON Schema published by the graph): which
 * decisions it allows and the schema of an edit's args, for the generated forms.
 * Pure functions over plain JSON; no React, no network.
 */
import type { DecisionType } from "../contracts/generated";
import { isDecisionType, isRecord, type JsonObject } from "./guards";

export type JsonSchema = JsonObject;

const MAX_REF_DEPTH = 32;

/** Follows local `$ref`s ("#/$defs/X", "#/definitions/X") against the root schema. */
export function resolveRef(root: JsonSchema, node: unknown): JsonSchema | null {
  let current = node;
  for (let depth = 0; depth < MAX_REF_DEPTH; depth += 1) {
    if (!isRecord(current)) return null;
    const ref = current.$ref;
    if (typeof ref !== "string") return current;
    if (!ref.startsWith("#")) return null;
    let target: unknown = root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      target = isRecord(target) ? target[key] : undefined;
    }
    current = target;
  }
  return null;
}

function branchType(branch: JsonSchema): string | undefined {
  const props = branch.properties;
  if (!isRecord(props) || !isRecord(props.type)) return undefined;
  const { const: constant, enum: options } = props.type;
  if (typeof constant === "string") return constant;
  if (Array.isArray(options) && options.length === 1 && typeof options[0] === "string") {
    return options[0];
  }
  return undefined;
}

/** The branches of a decision schema (a discriminated union on `type`, or one plain branch). */
export function decisionBranches(root: JsonSchema, node: unknown = root): Map<DecisionType, JsonSchema> {
  const branches = new Map<DecisionType, JsonSchema>();
  const resolved = resolveRef(root, node);
  if (!resolved) return branches;
  const union = resolved.oneOf ?? resolved.anyOf;
  const candidates = Array.isArray(union) ? union : [resolved];
  for (const candidate of candidates) {
    const branch = resolveRef(root, candidate);
    const type = branch && branchType(branch);
    if (branch && isDecisionType(type) && !branches.has(type)) branches.set(type, branch);
  }
  return branches;
}

export function allowedDecisionsFromSchema(root: JsonSchema, node: unknown = root): DecisionType[] {
  return [...decisionBranches(root, node).keys()];
}

/** The schema of `edited_action.args` in the edit branch, with the root's definitions kept. */
export function editArgsSchema(root: JsonSchema, node: unknown = root): JsonSchema | null {
  const edit = decisionBranches(root, node).get("edit");
  const editedAction = edit && isRecord(edit.properties) ? resolveRef(root, edit.properties.edited_action) : null;
  const args =
    editedAction && isRecord(editedAction.properties) ? resolveRef(root, editedAction.properties.args) : null;
  if (!args) return null;
  const withDefs: JsonSchema = { ...args };
  if (isRecord(root.$defs)) withDefs.$defs = root.$defs;
  if (isRecord(root.definitions)) withDefs.definitions = root.definitions;
  return withDefs;
}

/** In a batched `{decisions: [...]}` schema, the decision schema at `index` (tuple or list). */
export function batchedDecisionNode(root: JsonSchema, index: number): unknown {
  const props = root.properties;
  const decisions = isRecord(props) ? resolveRef(root, props.decisions) : null;
  if (!decisions) return null;
  const tuple = decisions.prefixItems ?? decisions.items;
  if (Array.isArray(tuple)) return tuple[index] ?? null;
  return isRecord(tuple) ? tuple : null;
}
