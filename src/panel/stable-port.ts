/**
 * The panel's port when the user's settings name none: the same one at every pi start, so a
 * bookmark and an `ssh -L` tunnel keep working. One per user on a shared machine (by uid), in a
 * range no common service uses.
 */
export const STABLE_PORT_BASE = 7300;
export const STABLE_PORT_SPAN = 500;

/**
 * `PI_SHEPHERD_PANEL_STABLE_PORT` names it instead where the uid rule does not fit (two machines'
 * users forwarded to one, a container where every user is uid 0); the tests use it too.
 */
export function stablePanelPort(uid: number | undefined = process.getuid?.(), env: NodeJS.ProcessEnv = process.env): number {
  const named = Number(env.PI_SHEPHERD_PANEL_STABLE_PORT);
  if (Number.isInteger(named) && named > 0 && named <= 65535) return named;
  return STABLE_PORT_BASE + ((uid ?? 0) % STABLE_PORT_SPAN);
}

/** The port a panel asks for: the user's `panel.port` when set (0: a free one), else the stable one. */
export function wantedPanelPort(setting: number | undefined, uid?: number): number {
  return setting ?? stablePanelPort(uid);
}
