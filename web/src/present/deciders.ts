/**
 * Who may decide a pending call, and whether the person looking may: the server's rule, read from the
 * interrupt (its required role, who asked, `self_approval`, who approved a quorum so far) and from
 * `GET /me` (the groups the person decides as), and said in words. A card offers its buttons only to
 * someone who may press them; the server still checks each answer. Pure; the roles come from the
 * published contract, so the app keeps no list of its own.
 */
import type { Me } from "../contracts/generated";
import { OWNER, ROLES } from "../contracts/schema";

export { OWNER };

/** Who may answer: the thread's owner (`OWNER`), or a group — a role (`reviewer`) or a team (`finance`). */
export type Decider = string;

/** Who is looking (`GET /me`): `decides_as` lists every group they decide as, their roles among them. */
export type Viewer = Pick<Me, "identity" | "role" | "decides_as">;

/** What the interrupt says about who decides one call. */
export interface DeciderRule {
  requiredRole: Decider;
  /** Who asked for the call (the thread's owner, the run's caller): they may not decide it unless `selfApproval`. */
  requestedBy: readonly string[];
  selfApproval: boolean;
  /** With a quorum: who approved these args so far (each person counts once). */
  approvedBy: readonly string[];
}

export interface Decidability {
  /** Whether the person looking may answer: show the buttons. */
  may: boolean;
  /** Who decides, in words ("A supervisor decides this"). */
  who: string;
  /** Why the person looking may not, in words; null when they may. */
  why: string | null;
}

/** A form's or an owner's question: only the thread's owner answers, and may (they asked it themselves). */
export const OWNER_ANSWERS: DeciderRule = { requiredRole: OWNER, requestedBy: [], selfApproval: true, approvedBy: [] };

const isRole = (group: Decider) => (ROLES as readonly string[]).includes(group);

/** A decider in words: "the thread's owner", "a supervisor", "someone in finance". */
export function inWords(decider: Decider): string {
  if (decider === OWNER) return "the thread's owner";
  return isRole(decider) ? `a ${decider}` : `someone in ${decider}`;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function whoDecides(rule: DeciderRule, owner: string | null): string {
  if (!rule.requiredRole) return "The interrupt names nobody who decides this; answer it from the API";
  if (rule.requiredRole === OWNER) return owner ? `${owner}, whose thread this is, answers this` : "The thread's owner answers this";
  const decides = `${capitalised(inWords(rule.requiredRole))} decides this`;
  const askers = rule.selfApproval ? [] : rule.requestedBy;
  return askers.length ? `${decides}, not ${askers.join(" or ")} who asked` : decides;
}

/** Whether `viewer` may answer a call under `rule` on a thread `owner` owns, and who may in words. */
export function decidability(rule: DeciderRule, viewer: Viewer | null, owner: string | null): Decidability {
  const who = whoDecides(rule, owner);
  const refuse = (why: string): Decidability => ({ may: false, who, why });
  if (viewer === null) return refuse("Checking who you are…");
  if (rule.requiredRole === OWNER) {
    return owner !== null && viewer.identity === owner ? { may: true, who, why: null } : refuse("Only the thread's owner answers it.");
  }
  if (!viewer.decides_as.includes(rule.requiredRole)) {
    const outside = isRole(rule.requiredRole) ? "" : `, not in ${rule.requiredRole}`;
    return refuse(`You are signed in as ${viewer.identity} (${viewer.role})${outside}.`);
  }
  if (!rule.selfApproval && rule.requestedBy.includes(viewer.identity)) {
    return refuse("You asked for it, so someone else decides it (four eyes).");
  }
  if (rule.approvedBy.includes(viewer.identity)) {
    return refuse("You approved it already; a different person approves next.");
  }
  return { may: true, who, why: null };
}
