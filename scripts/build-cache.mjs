// The machine's build cache, outside any clone: what is expensive to build from the project's files is kept under
// ~/.cache/toolsmith (or TOOLSMITH_BUILD_CACHE), in a folder named by a hash of its inputs, so that a fresh clone on
// the same machine reuses it and a changed input builds anew. Four entries use it, all through cacheEntry: the npm
// packages, the web app's build, the trainer's Python environment and the tests' SFT'd fixture model. An entry is
// used only once it was completed and is intact (its check), never half-written or altered. Uses only Node's
// standard library (set-up runs before node_modules exists).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const MANIFEST = '.sha256.json';
const STAT_MANIFEST = '.stat.json';
// A completed entry whose files change in use (a Python environment writes its byte code): its key, written last.
const COMPLETE = '.toolsmith-complete';
const MANIFESTS = [MANIFEST, STAT_MANIFEST, COMPLETE];

/** The cache's root folder (created owner-only on first use). */
export function buildCacheDir() {
  const dir = process.env.TOOLSMITH_BUILD_CACHE?.trim() || path.join(os.homedir(), '.cache', 'toolsmith');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The folder of the cache entry `name` for the inputs `key` (a hash of them in its name), or null with no cache. */
export function cacheEntryDir(name, key) {
  try {
    return path.join(buildCacheDir(), `${name}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`);
  } catch {
    return null;
  }
}

/** Every regular file under `dir` but the manifest, as sorted relative paths. */
function filesUnder(dir) {
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !MANIFESTS.includes(p)) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

const sha256 = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

const statOf = (file) => {
  const st = fs.statSync(file);
  return `${st.size}:${st.mtimeMs}`;
};

/** Write `manifestName` in `dir`: every file under it with `fingerprint(file)`. */
function writeFilesManifest(dir, manifestName, fingerprint) {
  const files = Object.fromEntries(filesUnder(dir).map((f) => [f, fingerprint(path.join(dir, f))]));
  fs.writeFileSync(path.join(dir, manifestName), `${JSON.stringify({ files })}\n`);
}

/** Whether `dir` holds exactly the files `manifestName` lists, each with its recorded fingerprint. False when there
 *  is no manifest (the entry was never completed) or anything differs. */
function verifyFilesManifest(dir, manifestName, fingerprint) {
  let recorded;
  try {
    recorded = JSON.parse(fs.readFileSync(path.join(dir, manifestName), 'utf8')).files;
  } catch {
    return false;
  }
  if (!recorded || typeof recorded !== 'object') return false;
  const present = filesUnder(dir);
  const listed = Object.keys(recorded).sort();
  if (present.length !== listed.length || present.some((f, i) => f !== listed[i])) return false;
  return present.every((f) => fingerprint(path.join(dir, f)) === recorded[f]);
}

/** Record the SHA-256 of every file under `dir` (call it once the entry is complete). */
export const writeManifest = (dir) => writeFilesManifest(dir, MANIFEST, sha256);

/** Whether `dir` holds exactly the files its manifest lists, each with its recorded hash. */
export const verifyManifest = (dir) => verifyFilesManifest(dir, MANIFEST, sha256);

/** Record each file's size and modification time: for an entry too large to hash on every use (node_modules, 1.3 GB
 *  in 33,000 files). A file changed in place, through a hard link too, changes its time and fails the check. */
export const writeStatManifest = (dir) => writeFilesManifest(dir, STAT_MANIFEST, statOf);

/** Whether `dir` holds exactly the files its stat manifest lists, each with its recorded size and time. */
export const verifyStatManifest = (dir) => verifyFilesManifest(dir, STAT_MANIFEST, statOf);

/** What "completed and intact" means for an entry: each file's hash (small entries), each file's size and time (an
 *  entry too large to hash on every use), or only that it was completed for these inputs (an entry that changes its
 *  own files in use, which its user then checks otherwise: a Python environment's imports). */
const CHECKS = {
  sha256: { seal: writeManifest, intact: verifyManifest },
  stat: { seal: writeStatManifest, intact: verifyStatManifest },
  complete: {
    seal: (dir, key) => fs.writeFileSync(path.join(dir, COMPLETE), key),
    intact: (dir, key) => {
      try {
        return fs.readFileSync(path.join(dir, COMPLETE), 'utf8') === key;
      } catch {
        return false;
      }
    },
  },
};

/**
 * The build cache's entry `name` for the inputs `key`, checked by `check` ('sha256', 'stat' or 'complete'), or null
 * when there is no cache (its folder cannot be made): the caller then builds inside the project. Every entry is made
 * the same way: `begin()` empties its folder, the caller writes into it, `seal()` records the check last, so an entry
 * cut off half-way is never `ready()`; `save(fill)` does the three for a build made elsewhere and copied in, and
 * only warns when the cache cannot be written (it is then only a slower next run).
 */
export function cacheEntry(name, key, check = 'sha256') {
  const dir = cacheEntryDir(name, key);
  if (!dir) return null;
  const { seal, intact } = CHECKS[check];
  const entry = {
    dir,
    ready: () => intact(dir, key),
    begin: () => {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
    },
    seal: () => seal(dir, key),
    save: (fill, warn = () => {}) => {
      try {
        entry.begin();
        fill(dir);
        entry.seal();
      } catch (e) {
        fs.rmSync(dir, { recursive: true, force: true });
        warn(`the build cache entry ${dir} could not be written (${e.message})`);
      }
    },
  };
  return entry;
}

/**
 * Hold the entry's lock (a folder beside it with the holder's pid) while it is built, for builders that may run at
 * once (test files in parallel wait for one to train the fixture model); a lock whose holder is dead is taken over.
 * Resolves to the function that releases it.
 */
export async function lockEntry(entry, timeoutMs) {
  const lock = `${entry.dir}.lock`;
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch {
      let pid = 0;
      let age = 0;
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs;
        pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8').trim() || 0);
      } catch {
        /* made a moment ago, its pid not yet written (or released meanwhile): look again */
      }
      // Without a pid for 10 s, its maker died between making it and writing its pid.
      if ((pid && !alive(pid)) || (!pid && age > 10_000)) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > until) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}
