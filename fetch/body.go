package fetch

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// TooLarge chooses what the Fetcher does with a body longer than
// Config.MaxBodyBytes.
type TooLarge int

const (
	// Truncate keeps the first MaxBodyBytes bytes and sets
	// Response.Truncated. It is the default: a crawler usually still wants
	// the links at the start of an over-long page.
	Truncate TooLarge = iota
	// Fail returns an error matching ErrBodyTooLarge.
	Fail
)

// maxEncodings bounds a Content-Encoding chain; real servers send one.
const maxEncodings = 3

// errWireLimit stops reading a compressed body whose wire size alone is over
// the body limit.
var errWireLimit = errors.New("wire limit")

// wireCounter counts the bytes read from the connection (after transfer
// decoding, before content decoding) and stops at a limit. n is read by the
// transfer-rate watchdog concurrently.
type wireCounter struct {
	r       io.Reader
	n       atomic.Int64
	limit   int64
	eof     bool  // the connection reported the end of the body
	limited bool  // the limit was reached
	err     error // the last read error other than io.EOF: the connection failed
	// kept, if set, keeps the bytes read (Config.KeepWire).
	kept *wireKeeper
}

// Read reads from the connection, counting bytes and enforcing the limit.
func (w *wireCounter) Read(p []byte) (int, error) {
	if w.limit > 0 {
		left := w.limit - w.n.Load()
		if left <= 0 {
			w.limited = true
			return 0, errWireLimit
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := w.r.Read(p)
	w.n.Add(int64(n))
	if w.kept != nil {
		w.kept.keep(p[:n])
	}
	if err == io.EOF {
		w.eof = true
	} else if err != nil {
		w.err = err
	}
	return n, err
}

// intact reports whether the connection delivered the body without failing
// so far (it may not have ended yet): a decoder error is then the body's
// fault, not the transfer's.
func (w *wireCounter) intact() bool { return w.err == nil && !w.limited }

// empty reports whether the body ended without a single byte: an empty body
// labelled with a content coding, which has nothing to decode.
func (w *wireCounter) empty() bool { return w.eof && w.n.Load() == 0 }

// contentEncodings parses a Content-Encoding header (RFC 9110 §8.4) into the
// codings in the order they were applied, dropping "identity".
func contentEncodings(v []string) ([]string, error) {
	var out []string
	for _, line := range v {
		for _, c := range strings.Split(line, ",") {
			c = strings.ToLower(strings.Trim(c, httpWhitespace))
			switch c {
			case "", "identity":
				continue
			case "x-gzip":
				c = "gzip"
			case "gzip", "deflate", "br", "zstd":
			default:
				return nil, fmt.Errorf("%w: %q", ErrUnsupportedEncoding, c)
			}
			out = append(out, c)
		}
	}
	if len(out) > maxEncodings {
		return nil, fmt.Errorf("%w: chain of %d codings", ErrUnsupportedEncoding, len(out))
	}
	return out, nil
}

// zstdMaxWindow is the largest zstd window the Fetcher decodes. RFC 9659 §3
// requires HTTP clients to decode windows up to 8 MB (2^23 bytes) and
// forbids servers to use larger ones for the zstd content coding, so a
// larger window is refused rather than allocated. It bounds the decoder's
// memory whatever Config.MaxBodyBytes is.
const zstdMaxWindow = 8 << 20

// zstdReader reports a zstd frame that needs more than zstdMaxWindow as
// ErrUnsupportedEncoding: the body cannot be decoded within the limit, and
// asking again gives the same frame. Like gzipReader, and as Chromium does,
// it ends the body at bytes after a complete frame that do not start
// another one (a zstd or skippable frame magic number); frames tracks the
// frame boundaries in what the decoder read to tell those bytes from a
// truncated or corrupt frame.
type zstdReader struct {
	d      *zstd.Decoder
	frames *zstdFrames
	done   bool
}

// Read decodes from the zstd stream.
func (z *zstdReader) Read(p []byte) (int, error) {
	if z.done {
		return 0, io.EOF
	}
	n, err := z.d.Read(p)
	// When streaming, the decoder returns these two errors only for a frame
	// whose window (or, for a single-segment frame, declared size) is over
	// the limit, or for a block larger than its frame's window.
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("%w: zstd frame exceeds the %d MiB window limit of RFC 9659 (%v)",
			ErrUnsupportedEncoding, zstdMaxWindow>>20, err)
	}
	if (errors.Is(err, zstd.ErrMagicMismatch) || errors.Is(err, io.ErrUnexpectedEOF)) && z.frames.trailingJunk() {
		z.done = true
		return n, io.EOF
	}
	return n, err
}

// zstdFrames follows the frame structure (RFC 8878 §3.1) of the bytes a
// zstd decoder reads, to know where each frame ends. The streaming decoder
// reads no further than it needs, so the bytes after the last complete
// frame are the ones it failed on.
type zstdFrames struct {
	r        io.Reader
	complete int    // frames seen to their end
	state    int    // zfHeader, zfBlockHeader, zfSkip, zfInvalid
	hdr      []byte // bytes of the frame or block header read so far
	skip     int64  // bytes of block content, checksum or skippable frame left
	last     bool   // the current block is the frame's last
	checksum bool   // the current frame ends with a checksum
	failed   bool   // reading the body failed (not at its end)
}

const (
	zfHeader = iota
	zfBlockHeader
	zfSkip
	zfInvalid
)

func (z *zstdFrames) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	for _, b := range p[:n] {
		z.feed(b)
	}
	if err != nil && err != io.EOF {
		z.failed = true
	}
	return n, err
}

// trailingJunk reports whether the decoder has read at least one complete
// frame and, after the last one, bytes that do not begin a frame (fewer
// than four before the body ended, or four that are not a frame's magic
// number), with the body read without failing.
func (z *zstdFrames) trailingJunk() bool {
	if z.failed || z.complete == 0 || z.state != zfHeader && z.state != zfInvalid {
		return false
	}
	if z.state == zfHeader && len(z.hdr) < 4 {
		return true
	}
	return z.state == zfInvalid && len(z.hdr) == 4
}

func (z *zstdFrames) feed(b byte) {
	switch z.state {
	case zfInvalid:
		return
	case zfSkip:
		z.skip--
		if z.skip == 0 {
			z.endSkip()
		}
		return
	}
	z.hdr = append(z.hdr, b)
	h := z.hdr
	if z.state == zfBlockHeader {
		if len(h) < 3 {
			return
		}
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		z.last = bh&1 == 1
		size := int64(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte
			size = 1
		case 3: // reserved
			z.state = zfInvalid
			return
		}
		z.hdr = z.hdr[:0]
		z.skip = size
		z.state = zfSkip
		if size == 0 {
			z.endSkip()
		}
		return
	}
	// Frame header.
	if len(h) < 4 {
		return
	}
	magic := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16 | uint32(h[3])<<24
	if magic&0xfffffff0 == 0x184d2a50 { // skippable frame: size, then data
		if len(h) < 8 {
			return
		}
		z.skip = int64(uint32(h[4]) | uint32(h[5])<<8 | uint32(h[6])<<16 | uint32(h[7])<<24)
		z.hdr = z.hdr[:0]
		z.last, z.checksum = true, false
		z.state = zfSkip
		if z.skip == 0 {
			z.frameDone()
		}
		return
	}
	if magic != 0xfd2fb528 {
		z.state = zfInvalid
		return
	}
	if len(h) < 5 {
		return
	}
	fhd := h[4]
	single := fhd>>5&1 == 1
	need := 5 + [4]int{0, 1, 2, 4}[fhd&3] + [4]int{0, 2, 4, 8}[fhd>>6]
	if !single {
		need++ // window descriptor
	} else if fhd>>6 == 0 {
		need++ // a one-byte content size
	}
	if len(h) < need {
		return
	}
	z.checksum = fhd>>2&1 == 1
	z.hdr = z.hdr[:0]
	z.state = zfBlockHeader
}

// endSkip ends a block's content, a checksum or a skippable frame.
func (z *zstdFrames) endSkip() {
	switch {
	case !z.last:
		z.state = zfBlockHeader
	case z.checksum:
		z.checksum = false
		z.skip = 4
	default:
		z.frameDone()
	}
}

func (z *zstdFrames) frameDone() {
	z.complete++
	z.last = false
	z.state = zfHeader
}

// brReader ends a brotli body at the end of its stream, ignoring any bytes
// after it as Chromium does (the decoder reports them as an error).
type brReader struct {
	r    *brotli.Reader
	done bool
}

func (b *brReader) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err != nil && err.Error() == "brotli: excessive input" {
		// The stream is complete; what follows it is not part of it.
		b.done = true
		return n, io.EOF
	}
	return n, err
}

// brotliPool keeps brotli readers between bodies: a new one allocates its
// ring buffer and tables (over 100 KiB) per response, which a profile of
// the realistic benchmark web showed as a fifth of the decoding's cost.
var brotliPool sync.Pool

func getBrotli(src io.Reader) *brotli.Reader {
	if br, ok := brotliPool.Get().(*brotli.Reader); ok {
		if br.Reset(src) == nil {
			return br
		}
	}
	return brotli.NewReader(src)
}

func putBrotli(br *brotli.Reader) {
	br.Reset(nil) // drop the body's reader until the next use
	brotliPool.Put(br)
}

// decoder wraps r in the decoders for codings, last applied first. The
// returned close function releases decoder resources.
func decoder(r io.Reader, codings []string) (io.Reader, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip":
			zr, err := newGzipReader(r)
			if err != nil {
				closeAll()
				return nil, nil, err // gzip's errors name gzip
			}
			r = zr
		case "deflate":
			// RFC 9110 §8.4.1.2 defines "deflate" as the zlib format (RFC
			// 1950), but many servers send raw DEFLATE (RFC 1951); tell them
			// apart by the zlib header check bits, as browsers do.
			br := bufio.NewReaderSize(r, 512)
			if hdr, err := br.Peek(2); err == nil && hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
				zr, err := zlib.NewReader(br)
				if err != nil {
					closeAll()
					return nil, nil, fmt.Errorf("deflate: %w", err)
				}
				r = zr
			} else {
				fr := flate.NewReader(br)
				closers = append(closers, func() { fr.Close() })
				r = fr
			}
		case "br":
			br := getBrotli(r)
			closers = append(closers, func() { putBrotli(br) })
			r = &brReader{r: br}
		case "zstd":
			// The window is bounded by the RFC 9659 limit, not by the body
			// limit: the body limit applies to the decoded output in
			// readBody, as for the other codings. WithDecoderMaxMemory
			// also caps the window (and a single-segment frame's declared
			// size, which is its window), so it is set to the same value.
			frames := &zstdFrames{r: r}
			zr, err := zstd.NewReader(frames,
				zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow),
				zstd.WithDecoderMaxMemory(zstdMaxWindow))
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("zstd: %w", err)
			}
			closers = append(closers, zr.Close)
			r = &zstdReader{d: zr, frames: frames}
		}
	}
	return r, closeAll, nil
}

// gzipReader decodes a gzip body of one or more members (RFC 1952 §2.2)
// and, as browsers and curl do, ends it at the first bytes after a member
// that do not start another one (the two-byte gzip magic): servers and
// proxies append newlines, NUL padding or worse to gzip bodies. Go's
// gzip.Reader would take those bytes for the header of a next member and
// fail (gzip.ErrHeader or io.ErrUnexpectedEOF), and a retry would get the
// same bytes again. Bytes that do start with the magic are decoded as a
// member, and fail if they are not one. The size and expansion limits
// apply to everything decoded, as readBody counts the wire bytes read.
type gzipReader struct {
	zr   *gzip.Reader
	src  *bufio.Reader // the compressed stream; gzip.Reader reads no further than a member's end from it
	done bool
}

func newGzipReader(r io.Reader) (*gzipReader, error) {
	// A bufio.Reader is an io.ByteReader, which gzip.Reader reads from
	// directly (it would otherwise wrap r in a bufio.Reader of its own),
	// so what follows a member is left in src.
	src := bufio.NewReader(r)
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	return &gzipReader{zr: zr, src: src}, nil
}

// Read decodes from the current member and moves on to the next one, if
// any, at the end of a member.
func (g *gzipReader) Read(p []byte) (int, error) {
	if g.done {
		return 0, io.EOF
	}
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		magic, err := g.src.Peek(2)
		switch {
		case len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b:
			// Another member.
		case len(magic) == 2 || len(magic) == 1 && magic[0] != 0x1f || err == io.EOF:
			// The end of the body, or bytes that are not a member.
			g.done = true
			return n, io.EOF
		default:
			// Reading failed (the connection, the wire limit) before the
			// next bytes could be told apart from a member.
			return n, err
		}
		if err := g.zr.Reset(g.src); err != nil {
			return n, err
		}
		g.zr.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

// bodyLimits are the caps applied while reading one body.
type bodyLimits struct {
	maxBody        int64
	onTooLarge     TooLarge
	maxExpansion   float64
	expansionFloor int64
}

// bodyResult is what readBody read.
type bodyResult struct {
	body      []byte
	truncated bool
}

// compressedRatio is the decoded size guessed per compressed byte, for the
// first buffer of an encoded body.
const compressedRatio = 4

// readBody reads the decoded body from dec, whose compressed bytes are
// counted by wire, enforcing lim. sizeHint is the expected decoded size
// (from the Content-Length), or -1.
func readBody(dec io.Reader, wire *wireCounter, compressed bool, sizeHint int64, lim bodyLimits) (bodyResult, error) {
	initial := int64(4096)
	if sizeHint > 0 {
		initial = min(sizeHint+1, lim.maxBody+1, 1<<20)
	}
	buf := make([]byte, 0, initial)
	for {
		if len(buf) == cap(buf) {
			// Grow by doubling, but never beyond one byte past the cap, so a
			// body that is too large costs at most the cap in memory.
			next := min(max(int64(cap(buf))*2, 4096), lim.maxBody+1)
			if next <= int64(cap(buf)) {
				// Buffer full at maxBody+1: the body is too large.
				return tooLarge(buf[:lim.maxBody], lim)
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := dec.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if compressed && int64(len(buf)) > lim.expansionFloor && lim.maxExpansion > 0 &&
			float64(len(buf)) > lim.maxExpansion*float64(max(wire.n.Load(), 1)) {
			return bodyResult{}, fmt.Errorf("%w: %d bytes decoded from %d on the wire (limit %.0f×)",
				ErrDecompressionBomb, len(buf), wire.n.Load(), lim.maxExpansion)
		}
		if int64(len(buf)) > lim.maxBody {
			return tooLarge(buf[:lim.maxBody], lim)
		}
		if err == io.EOF {
			return bodyResult{body: buf}, nil
		}
		if errors.Is(err, errWireLimit) || err != nil && wire.limited {
			// A decoder may report the wire limit as an error of its own.
			return tooLarge(buf, lim)
		}
		if err != nil {
			return bodyResult{body: buf}, err
		}
	}
}

func tooLarge(kept []byte, lim bodyLimits) (bodyResult, error) {
	if lim.onTooLarge == Fail {
		return bodyResult{}, fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, lim.maxBody)
	}
	return bodyResult{body: kept, truncated: true}, nil
}
