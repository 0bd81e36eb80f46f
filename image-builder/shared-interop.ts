// esbuild's CommonJS output gives every importing file its own copy of an imported CommonJS
// module's exports: `import fs from 'node:fs'` in 49 of machined's files is 49 calls of
// `__toESM(require("node:fs"))`, each defining a getter for every one of fs's ~100 exports, and
// each `require("tslib")` in @peculiar's modules (134 of them) is a `__toCommonJS` copy of tslib's
// 40. Measured on the host (machined's bundle run from its code cache, as the binary runs it):
// a quarter of its module code's time went to these copies. esbuild has no option to share them,
// so the bundle's two helpers are made to return one shared copy per module (shareInterop).
//
// A copy is shared only while the module has the same number of own properties as when it was
// made: a CommonJS module imported while its own code is still running (a require cycle) has
// fewer, and the next importer gets a fresh, complete copy, as it would without this.

/**
 * esbuild's helper definitions, as its minified CommonJS output writes them. Their parameters are
 * matched by pattern: esbuild renames them (`mod2`, `target2`) when the bundle has a top-level
 * `mod`, `isNodeMode` or `target` of its own. TO_ESM_TEXT is the form errors name.
 */
const TO_ESM = /var __toESM=(\(mod\d*,isNodeMode\d*,target\d*\)=>)/g;
const TO_ESM_TEXT = 'var __toESM=(mod,isNodeMode,target)=>';
const TO_COMMONJS = /(var |,)__toCommonJS=(mod\d*=>)/g;

/** What replaces them: function declarations (hoisted) over the renamed originals. */
const SHARED = [
  'var __bronzeInterop;',
  'function __bronzeShared(copy,slot,mod,isNodeMode){',
  'if(mod==null||typeof mod!="object"&&typeof mod!="function")return copy(mod,isNodeMode);',
  'var maps=__bronzeInterop||(__bronzeInterop=[new WeakMap,new WeakMap,new WeakMap]);',
  'var n=Object.getOwnPropertyNames(mod).length,hit=maps[slot].get(mod);',
  'if(hit&&hit.n===n)return hit.v;',
  'var v=copy(mod,isNodeMode);maps[slot].set(mod,{n:n,v:v});return v}',
].join('');
const SHARED_TO_ESM = 'function __toESM(mod,isNodeMode){return __bronzeShared(__toESMCopy,isNodeMode?1:0,mod,isNodeMode)}';
const SHARED_TO_COMMONJS = 'function __toCommonJS(mod){return __bronzeShared(__toCommonJSCopy,2,mod)}';

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

/**
 * The bundle with `__toESM` and `__toCommonJS` returning one shared copy per module. A bundle
 * that uses neither is returned as it is; one whose helpers are not written as this esbuild
 * writes them is an error (a new esbuild: look at its output again), not a silent no-op.
 */
export function shareInterop(text: string, name: string): string {
  const usesEsm = text.includes('__toESM(');
  const usesCjs = text.includes('__toCommonJS(');
  if (!usesEsm && !usesCjs) return text;
  const fail = (what: string): never => {
    throw new Error(`shareInterop: ${name}: ${what}; esbuild's helpers are not written as image-builder/shared-interop.ts expects`);
  };
  const at = text.indexOf('var __');
  if (at < 0) fail('no helper definitions');
  let out = text;
  const decls = [SHARED];
  // Only the helper's name changes; its parameters stay as esbuild named them.
  if (usesEsm) {
    const n = count(out, TO_ESM);
    if (n !== 1) fail(`'${TO_ESM_TEXT}' found ${n} times`);
    out = out.replace(TO_ESM, 'var __toESMCopy=$1');
    decls.push(SHARED_TO_ESM);
  }
  if (usesCjs) {
    const n = count(out, TO_COMMONJS);
    if (n !== 1) fail(`'__toCommonJS=mod=>' found ${n} times`);
    out = out.replace(TO_COMMONJS, '$1__toCommonJSCopy=$2');
    decls.push(SHARED_TO_COMMONJS);
  }
  // Before the first helper, after any directive ("use strict") the bundle starts with.
  return out.slice(0, at) + decls.join('') + out.slice(at);
}
