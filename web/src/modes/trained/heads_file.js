// A trained model's heads file: what was measured of each head on held-out data, written by the
// model's evaluation (web/date_model_heads.json by `mha date-eval`, web/english_lm_heads.json by
// scripts/training/evaluate_english_lm.py). One schema for every model:
//   {"model": {"xxh64": "<16 hex digits>", "file": "web/….safetensors", "config": {…}},
//    "heads": [{"layer": 0, "head": 1, "role": "…", …}, …], …}
// `model.xxh64` is the checksum the core verifies when it loads that file (model.checksum); roles
// measured on another file are not shown. What each entry of `heads` holds is the model's own
// (modes/date/date_view.js readRoles); the English model's file adds each head's report card, the
// protocols, what was measured and the checkpoints (readHeadsFile, read by english_view.js).
// Pure functions, no DOM.

/** The XXH64 of the model file the heads were measured on (json.model.xxh64, lowercase), or null. */
export function rolesChecksum(json) {
  const x =
    json && typeof json === 'object' && !Array.isArray(json) ? json.model?.xxh64 : undefined;
  return typeof x === 'string' && /^[0-9a-f]{16}$/i.test(x) ? x.toLowerCase() : null;
}

/**
 * Why the roles of heads file `json` are not shown for the model whose verified checksum is
 * `checksum` (the core's model.checksum): "`what` not shown: they were measured on another model
 * file (xxh64 …, this one is …)", without a final stop; null when they were measured on this file,
 * or the heads file names none.
 */
export function measuredElsewhere(json, checksum, what) {
  const measuredOn = rolesChecksum(json);
  const ours = checksum.toLowerCase();
  return measuredOn && measuredOn !== ours
    ? `${what} not shown: they were measured on another model file (xxh64 ${measuredOn}, this one is ${ours})`
    : null;
}

/** A finite number, or null. */
const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
/** A non-empty string cut to `max` characters, or null. */
const str = (x, max) => (typeof x === 'string' && x.trim() ? x.trim().slice(0, max) : null);
/** A head's {layer, head} when both are integers ≥ 0, else null. */
const headOf = (h) =>
  h && Number.isInteger(h.layer) && Number.isInteger(h.head) && h.layer >= 0 && h.head >= 0
    ? { layer: h.layer, head: h.head }
    : null;

/**
 * One row of a head's report card as the heads file writes it ({name, value, chance, count,
 * offset?, probe}: the core's head report card, docs/patterns.md "Head report card"), or null when
 * it has no name. Numbers that are not finite read as null.
 */
export function readCardRow(row) {
  const name = str(row?.name, 60);
  if (!name) return null;
  const out = {
    name,
    value: num(row.value),
    chance: num(row.chance),
    count: Number.isInteger(row.count) && row.count >= 0 ? row.count : null,
    probe: str(row.probe, 60),
  };
  if (Number.isInteger(row.offset)) out.offset = row.offset;
  return out;
}

/**
 * Everything a heads file measured, read defensively (any part missing or malformed is left out):
 *   heads: Map "layer.head" → {layer, head, role, score, ablation_cost, copying, card: [row]}
 *     (role null when the entry has none; card rows by readCardRow);
 *   protocols: Map score name → {protocol, figure} (figure null when the paper gives none);
 *   measured: the file's `measured` object ({} when none); coreferenceHead: "layer.head" of
 *   measured.coreference_head, or null; checkpoints: [{step, …numbers}].
 * The English model's file has all of these; the date model's has heads with roles only.
 */
export function readHeadsFile(json) {
  const ok = json && typeof json === 'object' && !Array.isArray(json);
  const heads = new Map();
  for (const h of ok && Array.isArray(json.heads) ? json.heads : []) {
    const at = headOf(h);
    if (!at) continue;
    heads.set(`${at.layer}.${at.head}`, {
      ...at,
      role: str(h.role, 80),
      score: num(h.score),
      ablation_cost: num(h.ablation_cost),
      copying: num(h.copying),
      card: (Array.isArray(h.card) ? h.card : []).map(readCardRow).filter(Boolean),
    });
  }
  const protocols = new Map();
  const p = ok && json.protocols && typeof json.protocols === 'object' ? json.protocols : {};
  for (const [name, x] of Object.entries(p)) {
    const protocol = str(x?.protocol, 400);
    if (protocol) protocols.set(name, { protocol, figure: str(x.figure, 400) });
  }
  const measured =
    ok && json.measured && typeof json.measured === 'object' && !Array.isArray(json.measured)
      ? json.measured
      : {};
  const c = headOf(measured.coreference_head);
  const checkpoints = (ok && Array.isArray(json.checkpoints) ? json.checkpoints : []).filter(
    (x) => x && Number.isInteger(x.step),
  );
  return {
    heads,
    protocols,
    measured,
    coreferenceHead: c ? `${c.layer}.${c.head}` : null,
    checkpoints,
  };
}
