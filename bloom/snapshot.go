package bloom

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

// Snapshot format, version 1. All integers are little-endian.
//
//	magic       [8]byte  "CKBLOOM\x00"
//	version     uint32   1
//	expected    uint64   Config.Expected (after defaults)
//	fpRate      float64  Config.FalsePositiveRate (IEEE 754 bits)
//	shards      uint32
//	then for each shard:
//	  count     uint64   keys recorded as new in the shard
//	  stages    uint32
//	  then for each stage:
//	    m       uint64   bits
//	    k       uint32   hash functions
//	    count   uint64   keys added to the stage
//	    words   [m/64]uint64
//	crc         uint32   CRC-32C (Castagnoli) of every preceding byte
//
// The shape fields are redundant with (expected, fpRate): Load recomputes
// the shape and rejects a snapshot whose stages disagree with it, so a
// snapshot can only describe a Set that New could have built.
const (
	snapshotMagic   = "CKBLOOM\x00"
	snapshotVersion = 1
)

// ErrCorrupt is wrapped by every error Load returns for a snapshot that is
// truncated, damaged, of an unknown version, or not a snapshot at all.
var ErrCorrupt = errors.New("bloom: corrupt snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes a snapshot of the set's filter to w (the keys of a store
// are not included: the store persists itself). Concurrent TestAndAdd
// calls may proceed; each shard is copied under its lock, so every key
// recorded before WriteTo began is in the snapshot. It implements
// io.WriterTo.
func (s *Set) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := &countingWriter{w: bw, crc: crc32.New(castagnoli)}
	var hdr []byte
	hdr = append(hdr, snapshotMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, snapshotVersion)
	hdr = binary.LittleEndian.AppendUint64(hdr, s.opts.Expected)
	hdr = binary.LittleEndian.AppendUint64(hdr, math.Float64bits(s.opts.FalsePositiveRate))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(s.shards)))
	cw.Write(hdr)
	var copies []stage
	var buf []byte
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		copies = copies[:0]
		count := sh.count.Load()
		stages := sh.list()
		for j, st := range stages {
			c := *st
			c.words = append([]uint64(nil), st.words...)
			if j == len(stages)-1 {
				c.count = sh.fill // the newest stage's count is kept in its shard
			}
			copies = append(copies, c)
		}
		sh.mu.Unlock()
		buf = binary.LittleEndian.AppendUint64(buf[:0], count)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(copies)))
		cw.Write(buf)
		for _, st := range copies {
			buf = binary.LittleEndian.AppendUint64(buf[:0], st.m)
			buf = binary.LittleEndian.AppendUint32(buf, st.k)
			buf = binary.LittleEndian.AppendUint64(buf, st.count)
			for _, w := range st.words {
				buf = binary.LittleEndian.AppendUint64(buf, w)
			}
			cw.Write(buf)
		}
	}
	buf = binary.LittleEndian.AppendUint32(buf[:0], cw.crc.Sum32())
	cw.Write(buf)
	if cw.err == nil {
		cw.err = bw.Flush()
	}
	if cw.err != nil {
		return cw.n, fmt.Errorf("bloom: writing snapshot: %w", cw.err)
	}
	return cw.n, nil
}

// countingWriter remembers the first error, so WriteTo can write
// unconditionally and check once.
type countingWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) {
	if c.err != nil {
		return
	}
	c.crc.Write(p)
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

// Load reads a snapshot written by Set.WriteTo and returns the Set it
// describes, with opts.Store as its store (Expected and FalsePositiveRate
// come from the snapshot; those of opts are ignored). Unlike New, Load does
// not read the store's keys: see Store for when that is safe.
//
// Memory allocated while reading grows with the bytes actually read, so a
// hostile header cannot make Load allocate more than the stream holds.
func Load(r io.Reader, opts Config) (*Set, error) {
	sr := &snapReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(castagnoli)}
	magic := sr.bytes(len(snapshotMagic))
	if sr.err == nil && string(magic) != snapshotMagic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, magic)
	}
	if v := sr.u32(); sr.err == nil && v != snapshotVersion {
		return nil, fmt.Errorf("%w: unsupported version %d", ErrCorrupt, v)
	}
	expected := sr.u64()
	rate := math.Float64frombits(sr.u64())
	nShards := sr.u32()
	if sr.err != nil {
		return nil, sr.fail("header")
	}
	s, err := newSet(Config{Expected: expected, FalsePositiveRate: rate, Store: opts.Store})
	if err != nil || expected == 0 || rate == 0 {
		return nil, fmt.Errorf("%w: header describes no valid set (expected %d, rate %v)", ErrCorrupt, expected, rate)
	}
	if uint64(nShards) != uint64(len(s.shards)) {
		return nil, fmt.Errorf("%w: %d shards, want %d for %d expected keys", ErrCorrupt, nShards, len(s.shards), expected)
	}
	for i := range s.shards {
		count := sr.u64()
		n := sr.u32()
		if sr.err != nil {
			return nil, sr.fail(fmt.Sprintf("shard %d", i))
		}
		if n == 0 || n > uint32(len(s.params)) {
			return nil, fmt.Errorf("%w: shard %d has %d stages", ErrCorrupt, i, n)
		}
		stages := make([]*stage, 0, n)
		for j := 0; j < int(n); j++ {
			sp := s.params[j]
			m, k, c := sr.u64(), sr.u32(), sr.u64()
			if sr.err != nil {
				return nil, sr.fail(fmt.Sprintf("shard %d stage %d", i, j))
			}
			if m != sp.m || k != sp.k {
				return nil, fmt.Errorf("%w: shard %d stage %d has m=%d k=%d, want m=%d k=%d", ErrCorrupt, i, j, m, k, sp.m, sp.k)
			}
			if c > sp.limit {
				return nil, fmt.Errorf("%w: shard %d stage %d holds %d keys, over its limit %d", ErrCorrupt, i, j, c, sp.limit)
			}
			words := sr.words(m / 64)
			if sr.err != nil {
				return nil, sr.fail(fmt.Sprintf("shard %d stage %d bits", i, j))
			}
			stages = append(stages, makeStage(words, m, k, c, sp.limit))
		}
		last := stages[len(stages)-1]
		s.shards[i].fill, last.count = last.count, 0
		s.shards[i].init(stages)
		s.shards[i].count.Store(count)
	}
	want := sr.crc.Sum32()
	got := sr.u32()
	if sr.err != nil {
		return nil, sr.fail("checksum")
	}
	if got != want {
		return nil, fmt.Errorf("%w: checksum %08x, computed %08x", ErrCorrupt, got, want)
	}
	return s, nil
}

// snapReader reads little-endian fields, keeps a running CRC and remembers
// the first error.
type snapReader struct {
	r       *bufio.Reader
	crc     hash.Hash32
	scratch [8]byte
	err     error
}

func (r *snapReader) fail(where string) error {
	if errors.Is(r.err, io.EOF) || errors.Is(r.err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated in %s", ErrCorrupt, where)
	}
	return fmt.Errorf("%w: reading %s: %w", ErrCorrupt, where, r.err)
}

func (r *snapReader) fill(p []byte) {
	if r.err != nil {
		return
	}
	if _, err := io.ReadFull(r.r, p); err != nil {
		r.err = err
		return
	}
	r.crc.Write(p)
}

func (r *snapReader) bytes(n int) []byte {
	p := make([]byte, n)
	r.fill(p)
	return p
}

func (r *snapReader) u32() uint32 {
	r.fill(r.scratch[:4])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(r.scratch[:4])
}

func (r *snapReader) u64() uint64 {
	r.fill(r.scratch[:8])
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(r.scratch[:8])
}

// words reads n words in chunks, so the allocation follows the data
// actually present rather than the count in the header.
func (r *snapReader) words(n uint64) []uint64 {
	const chunk = 1 << 13
	var out []uint64
	buf := make([]byte, chunk*8)
	for n > 0 && r.err == nil {
		c := min(n, chunk)
		p := buf[:c*8]
		r.fill(p)
		if r.err != nil {
			return nil
		}
		if out == nil {
			out = make([]uint64, 0, c)
		}
		for i := uint64(0); i < c; i++ {
			out = append(out, binary.LittleEndian.Uint64(p[i*8:]))
		}
		n -= c
	}
	return out
}
