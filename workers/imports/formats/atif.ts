/**
 * ATIF's side file: Harbor keeps a trial's reward in `<trial>/verifier/reward.txt` beside
 * `<trial>/agent/trajectory.json`. It is opened like every other file (contained, regular, at most
 * REWARD_FILE_BYTES); a refusal is a problem and the trial has no reward.
 */
import { REWARD_FILE_BYTES } from '../../../server/imports/bounds.ts';
import { readAll, RefusedFile, withContained } from '../../../server/imports/open.ts';
import { harborRewardFile } from '../../../server/imports/readers.ts';
import type { SideFiles } from '../pass.ts';

export const atifSideFiles: SideFiles = {
  async beside(t, file, problems) {
    const rel = harborRewardFile(file);
    if (!rel) return {};
    try {
      const n = await withContained(t.folder, rel, REWARD_FILE_BYTES, (f) =>
        Number(readAll(f).toString('utf8').trim()),
      );
      return Number.isFinite(n) ? { reward: n } : {};
    } catch (e) {
      if (!(e instanceof RefusedFile)) throw e;
      if (!e.missing) problems.add({ file: rel, line: 0, reason: `${e.reason} (the trial's reward)` });
      return {};
    }
  },
};
