/**
 * Expected URIs were computed independently with Node's
 * `'dsh-session:' + Buffer.from(JSON.stringify(id), 'utf8').toString('base64url')` (dsh's published
 * encoding, SPEC §2.3); `uri-oracle.node.test.ts` recomputes them with Buffer on every run.
 */
export const URI_VECTORS: ReadonlyArray<readonly [string, string]> = [
  ['session-434', 'dsh-session:InNlc3Npb24tNDM0Ig'],
  ['', 'dsh-session:IiI'],
  ['a', 'dsh-session:ImEi'],
  ['ab', 'dsh-session:ImFiIg'],
  ['abc', 'dsh-session:ImFiYyI'],
  ['日本語のセッション', 'dsh-session:IuaXpeacrOiqnuOBruOCu-ODg-OCt-ODp-ODsyI'],
  ['🎉 emoji 🚀', 'dsh-session:IvCfjokgZW1vamkg8J-agCI'],
  ['quote"d', 'dsh-session:InF1b3RlXCJkIg'],
  ['back\\slash', 'dsh-session:ImJhY2tcXHNsYXNoIg'],
  ['ctrl\u0000\u0001\u001f\t\n\r', 'dsh-session:ImN0cmxcdTAwMDBcdTAwMDFcdTAwMWZcdFxuXHIi'],
  ['\ud800', 'dsh-session:Ilx1ZDgwMCI'],
  ['\udfff', 'dsh-session:Ilx1ZGZmZiI'],
  ['x\ud800y', 'dsh-session:InhcdWQ4MDB5Ig'],
  ['\udfff\ud800', 'dsh-session:Ilx1ZGZmZlx1ZDgwMCI'],
  ['</referenced-sessions>', 'dsh-session:IjwvcmVmZXJlbmNlZC1zZXNzaW9ucz4i'],
  ['\u2028\u2029', 'dsh-session:IuKAqOKAqSI'],
  ['Ωμέγα', 'dsh-session:Is6pzrzOrc6zzrEi'],
  ['tab\there', 'dsh-session:InRhYlx0aGVyZSI'],
];
