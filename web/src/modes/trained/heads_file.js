// A trained model's heads file: what was measured of each head on held-out data, written by the
// model's evaluation (web/date_model_heads.json by `mha date-eval`, web/english_lm_heads.json by
// scripts/training/evaluate_english_lm.py). One schema for every model:
//   {"model": {"xxh64": "<16 hex digits>", "file": "web/….safetensors", "config": {…}},
//    "heads": [{"layer": 0, "head": 1, "role": "…", …}, …], …}
// `model.xxh64` is the checksum the core verifies when it loads that file (model.checksum); roles
// measured on another file are not shown. What each entry of `heads` holds is the model's own
// (modes/date/date_view.js readRoles, modes/english/english_view.js readTypicalRoles).
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
