// The machine's build cache, outside any clone: what is expensive to build from the project's files (the SFT'd
// fixture model of the tests) is kept under ~/.cache/toolsmith (or TOOLSMITH_BUILD_CACHE), in a folder named by a
// hash of its inputs, so that a fresh clone on the same machine reuses it and a changed input builds anew. Each
// entry carries a manifest of its files' SHA-256, checked before it is used: a half-written or altered entry is
// rebuilt, never trusted. Uses only Node's standard library (set-up runs before node_modules exists).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const MANIFEST = '.sha256.json';
const STAT_MANIFEST = '.stat.json';
const MANIFESTS = [MANIFEST, STAT_MANIFEST];

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
