package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Key layout in a Store (part of the on-disk format; never changes without
// a format version bump):
//
//	"m" "seq"                          -> uint64 big-endian: highest sequence number used
//	"q" host 0x00 band seq             -> record: a URL queued for its host
//	"d" due seq                        -> record with host and band: a URL waiting for its time
//
// band is one byte, seq and due are 8 bytes big-endian (due is Unix
// nanoseconds with the sign bit flipped so that byte order is time order).
// Host names never contain bytes below 0x21, so "q" host 0x00 is a prefix
// owned by exactly one host and "q" host 0x01 is past all of its keys: the
// frontier reaches a host's URLs with one seek and never scans other hosts.
const (
	kindQueued  byte = 'q'
	kindDelayed byte = 'd'
	recordV1    byte = 1

	flagMeta    byte = 1 << 0
	flagRecrawl byte = 1 << 1
	flagPrio    byte = 1 << 2
)

var (
	metaSeqKey = []byte("mseq")

	// ErrCorrupt reports a store record the frontier cannot decode.
	ErrCorrupt = errors.New("frontier: corrupt store record")
)

// hostPrefix returns "q" host 0x00.
func hostPrefix(host string) []byte {
	k := make([]byte, 0, len(host)+2+1+8)
	k = append(k, kindQueued)
	k = append(k, host...)
	return append(k, 0)
}

// queuedKey returns the key of a queued URL of host in band with seq.
func queuedKey(host string, band uint8, seq uint64) []byte {
	k := hostPrefix(host)
	k = append(k, band)
	return binary.BigEndian.AppendUint64(k, seq)
}

// delayedKey returns the key of a URL due at due (Unix nanoseconds).
func delayedKey(due int64, seq uint64) []byte {
	k := make([]byte, 0, 17)
	k = append(k, kindDelayed)
	k = binary.BigEndian.AppendUint64(k, uint64(due)^(1<<63))
	return binary.BigEndian.AppendUint64(k, seq)
}

// parseQueuedKey splits a queued key into host, band and seq.
func parseQueuedKey(k []byte) (host string, band uint8, seq uint64, err error) {
	if len(k) < 1+1+1+1+8 || k[0] != kindQueued || k[len(k)-10] != 0 {
		return "", 0, 0, fmt.Errorf("%w: malformed queued key %q", ErrCorrupt, k)
	}
	host = string(k[1 : len(k)-10])
	return host, k[len(k)-9], binary.BigEndian.Uint64(k[len(k)-8:]), nil
}

// parseDelayedKey splits a delayed key into due time and seq.
func parseDelayedKey(k []byte) (due int64, seq uint64, err error) {
	if len(k) != 17 || k[0] != kindDelayed {
		return 0, 0, fmt.Errorf("%w: malformed delayed key %q", ErrCorrupt, k)
	}
	return int64(binary.BigEndian.Uint64(k[1:9]) ^ (1 << 63)), binary.BigEndian.Uint64(k[9:]), nil
}

// record is the decoded value of a queued or delayed key.
type record struct {
	host     string // delayed records only
	band     uint8  // delayed records only
	url      string
	depth    uint64
	attempts uint64
	prio     float64
	meta     string
	fp       uint64
	interval int64
	recrawl  bool
}

// Record limits: a record that claims more is corrupt, not a reason to
// allocate.
const (
	maxURLBytes  = 64 << 10
	maxMetaBytes = 64 << 10
	maxHostBytes = 1024
)

// appendRecord encodes r. Delayed records carry their host and band, which
// queued records have in their key.
func appendRecord(b []byte, r *record, delayed bool) []byte {
	var flags byte
	if r.meta != "" {
		flags |= flagMeta
	}
	if r.recrawl {
		flags |= flagRecrawl
	}
	if r.prio != 0 {
		flags |= flagPrio
	}
	b = append(b, recordV1, flags)
	b = binary.AppendUvarint(b, r.depth)
	b = binary.AppendUvarint(b, r.attempts)
	if flags&flagPrio != 0 {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.prio))
	}
	b = binary.AppendUvarint(b, uint64(len(r.url)))
	b = append(b, r.url...)
	if delayed {
		b = binary.AppendUvarint(b, uint64(len(r.host)))
		b = append(b, r.host...)
		b = append(b, r.band)
	}
	if flags&flagMeta != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.meta)))
		b = append(b, r.meta...)
	}
	if flags&flagRecrawl != 0 {
		b = binary.BigEndian.AppendUint64(b, r.fp)
		b = binary.AppendVarint(b, r.interval)
	}
	return b
}

// decodeRecord decodes a record written by appendRecord. It never panics and
// never allocates more than the input's length, whatever the input.
func decodeRecord(b []byte, delayed bool) (record, error) {
	var r record
	d := decoder{b: b}
	if v := d.byte(); v != recordV1 {
		return r, fmt.Errorf("%w: unknown record version %d", ErrCorrupt, v)
	}
	flags := d.byte()
	r.depth = d.uvarint()
	r.attempts = d.uvarint()
	if flags&flagPrio != 0 {
		r.prio = math.Float64frombits(d.uint64())
		r.prio = math.Abs(r.prio)
		if math.IsNaN(r.prio) || math.IsInf(r.prio, 0) {
			r.prio = 0
		}
	}
	r.url = d.str(maxURLBytes)
	if delayed {
		r.host = d.str(maxHostBytes)
		r.band = d.byte()
	}
	if flags&flagMeta != 0 {
		r.meta = d.str(maxMetaBytes)
	}
	if flags&flagRecrawl != 0 {
		r.recrawl = true
		r.fp = d.uint64()
		r.interval = d.varint()
	}
	if d.err != nil {
		return record{}, d.err
	}
	if len(d.b) != 0 {
		return record{}, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(d.b))
	}
	if r.url == "" {
		return record{}, fmt.Errorf("%w: empty URL", ErrCorrupt)
	}
	if delayed {
		if err := checkHost(r.host); err != nil {
			return record{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	return r, nil
}

// decoder reads fields from a byte slice, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or invalid %s", ErrCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("byte")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail("fixed64")
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str(max int) string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(max) || n > uint64(len(d.b)) {
		d.fail("length")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
