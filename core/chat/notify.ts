// --notifications: say that a reply is done, for a user who looked away: the terminal
// bell, or --notifications-command (e.g. `notify-send coder "reply ready"`).
import type { Kit } from "../plugin.ts";

export interface NotifyOptions {
  notifications: boolean;
  notificationsCommand?: string;
}

/** Ring the front end's bell, or run the notification command (its failure is only a warning). */
export async function notifyReplyDone(o: NotifyOptions, kit: Kit, warn: (text: string) => void, bell: () => void): Promise<void> {
  if (!o.notifications) return;
  if (!o.notificationsCommand) return bell();
  const r = await kit.run(o.notificationsCommand, { timeoutMs: 10_000 });
  if (r.code !== 0) warn(`--notifications-command failed (exit code ${r.code}): ${`${r.stderr}${r.stdout}`.trim().split("\n")[0] ?? ""}`);
}
