/**
 * Who may decide a pending call, and whether the person looking may: the server's rule, read from the
 * interrupt (its required role, who asked, `self_approval`, who approved a quorum so far) and said in
 * words. A card offers its buttons only to someone who may press them; the server still checks each
 * answer. Pure.
 */
import type { ToolApprovalRequest } from "../contracts/generated";

/** Who may answer: the thread's owner, a reviewer (or a supervisor), only a supervisor, or a team ("finance"). */
export type Decider = ToolApprovalRequest["required_role"];

export interface Viewer {
  identity: string;
  role: string;
  /** The teams the viewer is in beyond their role (`GET /me`'s `groups`). */
  groups?: readonly string[];
}

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

const ROLES_THAT_DECIDE: Partial<Record<Decider, readonly string[]>> = {
  reviewer: ["reviewer", "supervisor"],
  supervisor: ["supervisor"],
};

/** A form's or an owner's question: only the thread's owner answers. */
export const OWNER_ANSWERS: DeciderRule = { requiredRole: "owner", requestedBy: [], selfApproval: true, approvedBy: [] };

function whoDecides(rule: DeciderRule, owner: string | null): string {
  if (rule.requiredRole === "owner") return owner ? `${owner}, whose thread this is, answers this` : "The thread's owner answers this";
  const role =
    rule.requiredRole === "supervisor"
      ? "A supervisor decides this"
      : rule.requiredRole === "reviewer"
        ? "A reviewer or a supervisor decides this"
        : `Someone in ${rule.requiredRole} decides this`;
  const askers = rule.selfApproval ? [] : rule.requestedBy;
  return askers.length ? `${role}, not ${askers.join(" or ")} who asked` : role;
}

/** Whether `viewer` may answer a call under `rule` on a thread `owner` owns, and who may in words. */
export function decidability(rule: DeciderRule, viewer: Viewer | null, owner: string | null): Decidability {
  const who = whoDecides(rule, owner);
  const refuse = (why: string): Decidability => ({ may: false, who, why });
  if (viewer === null) return refuse("Checking who you are…");
  if (rule.requiredRole === "owner") {
    return owner !== null && viewer.identity === owner ? { may: true, who, why: null } : refuse("Only the thread's owner answers it.");
  }
  const roles = ROLES_THAT_DECIDE[rule.requiredRole];
  const member = roles ? roles.includes(viewer.role) : (viewer.groups ?? []).includes(rule.requiredRole);
  if (!member) {
    return refuse(`You are signed in as ${viewer.identity} (${viewer.role}).`);
  }
  if (!rule.selfApproval && rule.requestedBy.includes(viewer.identity)) {
    return refuse("You asked for it, so someone else decides it (four eyes).");
  }
  if (rule.approvedBy.includes(viewer.identity)) {
    return refuse("You approved it already; a different person approves next.");
  }
  return { may: true, who, why: null };
}
