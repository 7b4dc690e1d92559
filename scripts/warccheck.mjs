// warccheck.mjs checks WARC files with warcio.js, a reader that shares no
// code with crawlkit: every record parses, every WARC-Block-Digest and
// WARC-Payload-Digest matches the bytes warcio reads, and the CDXJ index
// crawlkit wrote beside each file (NAME.cdxj) has the lines warcio's own
// cdx-index gives: the same records, at the same offsets and lengths, with
// the same keys, timestamps, digests, statuses and types.
//
// Usage: node warccheck.mjs WARCIO_DIR FILE.warc.gz...
// (WARCIO_DIR is where `npm install warcio` was run.) It prints counts and
// exits 1 on any error.
import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import path from "node:path";

const [warcioDir, ...files] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(warcioDir), "package.json"));
const { WARCParser } = await import(require.resolve("warcio"));
const cli = path.join(path.resolve(warcioDir), "node_modules", ".bin", "warcio");

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
function sha1b32(parts) {
  const h = createHash("sha1");
  for (const p of parts) h.update(p);
  const buf = h.digest();
  let bits = 0, value = 0, out = "";
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return "sha1:" + out;
}

const counts = { files: 0, records: 0, errors: 0, blockDigests: 0, blockMismatches: 0,
  payloadDigests: 0, payloadMismatches: 0, indexLines: 0, indexMismatches: 0 };
const byType = {};
function fail(msg) {
  counts.errors++;
  console.error("ERROR " + msg);
}

for (const file of files) {
  counts.files++;
  // Pass 1: the block as a whole (parseHttp off), for WARC-Block-Digest.
  const blocks = [];
  for await (const rec of new WARCParser(createReadStream(file), { parseHttp: false })) {
    const block = await rec.readFully(false);
    const type = rec.warcType;
    byType[type] = (byType[type] || 0) + 1;
    counts.records++;
    const want = rec.warcHeader("WARC-Block-Digest");
    if (want) {
      counts.blockDigests++;
      if (sha1b32([block]) !== want) {
        counts.blockMismatches++;
        fail(`${file}: ${type} ${rec.warcTargetURI}: WARC-Block-Digest ${want}, block digests to ${sha1b32([block])}`);
      }
    }
    if (block.length !== rec.warcContentLength) fail(`${file}: ${type} ${rec.warcTargetURI}: block of ${block.length} bytes, Content-Length ${rec.warcContentLength}`);
    blocks.push(type);
  }
  // Pass 2: warcio's HTTP parsing, for WARC-Payload-Digest over the
  // payload it reads raw (content codings and all).
  for await (const rec of new WARCParser(createReadStream(file))) {
    const want = rec.warcPayloadDigest;
    const payload = await rec.readFully(false);
    if (!want || rec.warcType === "revisit") continue;
    counts.payloadDigests++;
    if (sha1b32([payload]) !== want) {
      counts.payloadMismatches++;
      fail(`${file}: ${rec.warcType} ${rec.warcTargetURI}: WARC-Payload-Digest ${want}, payload digests to ${sha1b32([payload])}`);
    }
  }
  // The index beside the file against warcio's cdx-index.
  const index = file.replace(/\.warc\.gz$/, ".cdxj");
  if (!existsSync(index)) {
    fail(`${file}: no index ${index}`);
    continue;
  }
  const theirs = execFileSync(cli, ["cdx-index", file], { encoding: "utf8", maxBuffer: 1 << 30 })
    .split("\n").filter((l) => l.trim() !== "");
  const ours = readFileSync(index, "utf8").split("\n").filter((l) => l !== "");
  const parse = (l) => {
    const i = l.indexOf(" "), j = l.indexOf(" ", i + 1);
    const o = JSON.parse(l.slice(j + 1));
    return { key: l.slice(0, i), ts: l.slice(i + 1, j), ...o, filename: path.basename(o.filename) };
  };
  const theirsBy = new Map(theirs.map((l) => { const o = parse(l); return [o.offset, o]; }));
  counts.indexLines += ours.length;
  if (ours.length !== theirs.length) fail(`${index}: ${ours.length} lines, warcio cdx-index gives ${theirs.length}`);
  const sorted = [...ours].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  if (sorted.join("\n") !== ours.join("\n")) fail(`${index}: not sorted`);
  for (const l of ours) {
    const o = parse(l), t = theirsBy.get(o.offset);
    const fields = ["key", "ts", "url", "mime", "status", "digest", "length", "offset", "filename"];
    const diff = t ? fields.filter((f) => String(o[f] ?? "") !== String(t[f] ?? "")) : ["offset"];
    if (diff.length) {
      counts.indexMismatches++;
      fail(`${index}: line ${l}\n  warcio: ${t ? JSON.stringify(t) : "no record at this offset"} (differs in ${diff.join(", ")})`);
    }
  }
}
console.log(JSON.stringify({ ...counts, byType }));
process.exit(counts.errors ? 1 : 0);
