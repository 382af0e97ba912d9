import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

export const allAchievements = (db: Db) => db.any<DbRow>('SELECT * FROM achievements ORDER BY id');

/** Every achievement with one wallet's progress and unlock time (0 and null where it has none). */
export const achievementsOfWallet = (db: Db, wallet: string) =>
  db.any<DbRow>(
    `SELECT a.*, COALESCE(u.progress, 0) AS progress, u.unlocked_at
       FROM achievements a LEFT JOIN user_achievements u ON u.achievement_id = a.id AND u.wallet = $1 ORDER BY a.id`,
    [wallet],
  );
