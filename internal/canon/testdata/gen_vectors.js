// Generates the JCS reference vectors used by canon tests, with JavaScript's
// own Number serialisation, UTF-16 key sort and JSON.stringify escaping as the
// oracle (RFC 8785 defines JCS by exactly these). Deterministic (fixed seed).
//
//   node internal/canon/testdata/gen_vectors.js internal/canon/testdata
//
// Writes jcs_numbers.txt ("<16 hex digits of the IEEE-754 bits> <String(x)>")
// and jcs_objects.txt (pairs of lines: an input JSON text with shuffled keys,
// random escapes and whitespace, then its canonical form).
'use strict';
const fs = require('fs');
const path = require('path');
const out = process.argv[2] || '.';

let seed = 0x2545f491n;
function rnd() { // xorshift64*, as a float in [0,1)
  seed ^= seed >> 12n; seed ^= (seed << 25n) & 0xffffffffffffffffn; seed ^= seed >> 27n;
  const r = (seed * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
  return Number(r >> 11n) / 2 ** 53;
}
const int = (n) => Math.floor(rnd() * n);

// Numbers.
const buf = new DataView(new ArrayBuffer(8));
const nums = [];
function addNum(x) {
  buf.setFloat64(0, x);
  const hex = buf.getBigUint64(0).toString(16).padStart(16, '0');
  nums.push(hex + ' ' + String(x));
}
for (let i = 0; i < 1500; i++) { // uniform bit patterns, finite only
  let hi = int(2 ** 32), lo = int(2 ** 32);
  buf.setUint32(0, hi); buf.setUint32(4, lo);
  const x = buf.getFloat64(0);
  if (Number.isFinite(x)) addNum(x);
}
for (let i = 0; i < 500; i++) addNum((rnd() - 0.5) * 10 ** (int(60) - 30)); // decimals around 1
for (let i = 0; i < 200; i++) addNum(Math.round((rnd() - 0.5) * 2 ** (int(80)))); // integers, some beyond 2^53
for (const e of [-7, -6, -5, 20, 21, 22]) { addNum(10 ** e); addNum(1.5 * 10 ** e); addNum(-(10 ** e)); }
fs.writeFileSync(path.join(out, 'jcs_numbers.txt'), nums.join('\n') + '\n');

// Objects.
const pools = [
  [0x20, 0x7e], [0x00, 0x1f], [0x7f, 0xff], [0x100, 0x7ff], [0x800, 0xd7ff],
  [0xe000, 0xffff], [0x10000, 0x10ffff], [0x4e00, 0x9fff],
];
function randChar() {
  const [a, b] = pools[int(pools.length)];
  return String.fromCodePoint(a + int(b - a + 1));
}
function randString(max) {
  let s = '';
  const n = int(max + 1);
  for (let i = 0; i < n; i++) s += rnd() < 0.6 ? String.fromCharCode(0x61 + int(26)) : randChar();
  return s;
}
function randNumber() {
  switch (int(4)) {
    case 0: return int(1000);
    case 1: return (rnd() - 0.5) * 10 ** (int(40) - 20);
    case 2: return -int(2 ** 53);
    default: return Math.round(rnd() * 1e6) / 100;
  }
}
function randValue(depth) {
  const r = int(depth > 3 ? 5 : 7);
  switch (r) {
    case 0: return null;
    case 1: return rnd() < 0.5;
    case 2: return randNumber();
    case 3: case 4: return randString(12);
    case 5: { const a = []; for (let i = int(5); i > 0; i--) a.push(randValue(depth + 1)); return a; }
    default: {
      const o = {};
      for (let i = int(7); i > 0; i--) {
        // Keys share prefixes often, so ordering beyond the first code unit is exercised.
        const k = rnd() < 0.5 ? 'k' + randString(3) : randString(4);
        o[k] = randValue(depth + 1);
      }
      return o;
    }
  }
}
function canon(v) {
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}
const ws = () => [' ', '', '\n', '\t', '\r\n  '][int(5)];
function messyString(s) {
  let o = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    if (ch === '"' || ch === '\\' || cp < 0x20 || rnd() < 0.2) {
      if (cp > 0xffff) {
        for (let i = 0; i < ch.length; i++) o += '\\u' + ch.charCodeAt(i).toString(16).padStart(4, '0')[rnd() < 0.5 ? 'toUpperCase' : 'toLowerCase']();
      } else if (ch === '/' || rnd() < 0.5) {
        o += '\\u' + cp.toString(16).padStart(4, '0');
      } else {
        o += JSON.stringify(ch).slice(1, -1);
      }
    } else {
      o += ch;
    }
  }
  return o + '"';
}
function messy(v) {
  if (Array.isArray(v)) return '[' + ws() + v.map(messy).join(ws() + ',' + ws()) + ws() + ']';
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i > 0; i--) { const j = int(i + 1); [keys[i], keys[j]] = [keys[j], keys[i]]; }
    return '{' + ws() + keys.map((k) => messyString(k) + ws() + ':' + ws() + messy(v[k])).join(',' + ws()) + ws() + '}';
  }
  if (typeof v === 'string') return messyString(v);
  if (typeof v === 'number' && Number.isInteger(v) && rnd() < 0.3) return v.toExponential().replace('+', ''); // 1.5e3
  return JSON.stringify(v);
}
const objs = [];
for (let i = 0; i < 400; i++) {
  const o = {};
  for (let j = int(8) + 1; j > 0; j--) o[randString(5)] = randValue(1);
  objs.push(JSON.stringify(messy(o)).length > 0 ? messy(o).replace(/\n/g, ' ') : '');
  objs.push(canon(o));
}
fs.writeFileSync(path.join(out, 'jcs_objects.txt'), objs.join('\n') + '\n');
