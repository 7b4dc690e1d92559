package crawltest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Kinds of hostile endpoint, for HostileURL. Each is served by HostileHost
// and is bounded on the server side: nothing runs past Close, and nothing
// runs forever once the client goes away.
const (
	// HostileSlowDrip sends a 200 HTML response one byte per
	// Config.DripInterval, for up to 10 minutes.
	HostileSlowDrip = "slow-drip"
	// HostileStall sends nothing at all, not even headers, until the
	// client goes away; after 10 minutes, or when the web closes, it cuts
	// the connection without a response.
	HostileStall = "stall"
	// HostileEndless sends an HTML body without Content-Length that goes
	// on until the client goes away or Config.EndlessSize bytes are sent.
	HostileEndless = "endless"
	// HostileGzipBomb sends Content-Encoding: gzip whose body decompresses
	// to Config.BombSize bytes, rounded up to whole MiB when it is over
	// 1 MiB (concatenated gzip members of zeros).
	HostileGzipBomb = "gzip-bomb"
	// HostileBrotliBomb is the same with Content-Encoding: br, one stream
	// of exactly Config.BombSize bytes.
	HostileBrotliBomb = "brotli-bomb"
	// HostileZstdBomb is the same with Content-Encoding: zstd
	// (concatenated zstd frames).
	HostileZstdBomb = "zstd-bomb"
	// HostileRedirectLoop redirects (302) to a second URL that redirects
	// back, forever.
	HostileRedirectLoop = "redirect-loop"
	// HostilePrivateRedirect redirects to http://10.0.0.1/admin, a private
	// address. It is only a Location header: Web.DialContext refuses the
	// address, so nothing ever connects there.
	HostilePrivateRedirect = "redirect-private"
	// HostileMetadataRedirect redirects to the link-local cloud metadata
	// address http://169.254.169.254/latest/meta-data/ (Location header
	// only, as above).
	HostileMetadataRedirect = "redirect-metadata"
	// HostileWrongLength declares a Content-Length of 100000 and sends
	// only 1000 bytes before closing the connection.
	HostileWrongLength = "wrong-length"
	// HostileBadCharset declares a charset that does not exist, in the
	// header and in a meta tag, over a body that is not valid UTF-8.
	HostileBadCharset = "bad-charset"
	// HostileBinary sends 64 KiB of binary data (a PNG signature, NUL
	// bytes, noise) as Content-Type: text/html.
	HostileBinary = "binary-html"
	// HostileHugeHeaders sends 4 MiB of response headers (256 headers of
	// 16 KiB) before a small body.
	HostileHugeHeaders = "huge-headers"
	// HostileTooManyRequests answers 429 with Retry-After: 120.
	HostileTooManyRequests = "too-many-requests"
	// HostileUnavailable answers 503 with a Retry-After HTTP date one hour
	// after Config.Now's now.
	HostileUnavailable = "unavailable"
)

// AllHostileKinds returns every hostile endpoint kind, in a new slice.
func AllHostileKinds() []string {
	return []string{
		HostileSlowDrip, HostileStall, HostileEndless, HostileGzipBomb, HostileBrotliBomb, HostileZstdBomb,
		HostileRedirectLoop, HostilePrivateRedirect, HostileMetadataRedirect, HostileWrongLength,
		HostileBadCharset, HostileBinary, HostileHugeHeaders, HostileTooManyRequests, HostileUnavailable,
	}
}

// HostileURL returns the URL of a hostile endpoint ("http://hostile.test/"
// + kind). Kinds not listed by AllHostileKinds answer 404.
func (w *Web) HostileURL(kind string) string { return "http://" + HostileHost + "/" + kind }

// hostileTimeout bounds the endpoints that would otherwise only end when
// the client goes away.
const hostileTimeout = 10 * time.Minute

// bombCache holds the compressed bodies of the bombs, built on first use.
type bombCache struct {
	once                        [3]sync.Once
	gzipUnit, zstdUnit, brotli  []byte // a gzip member and a zstd frame of bombUnit zeros; the whole brotli stream
	gzipErr, zstdErr, brotliErr error
}

const bombUnit = 1 << 20 // decompressed bytes per gzip member or zstd frame

func (w *Web) serveHostile(rw http.ResponseWriter, r *http.Request) {
	kind := strings.TrimPrefix(r.URL.Path, "/")
	hdr := rw.Header()
	ctx := r.Context()
	switch kind {
	case HostileSlowDrip:
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		rw.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(rw)
		page := []byte("<!DOCTYPE html><html><head><title>Slow</title></head><body><p>" + strings.Repeat("slow ", 4096) + "</p></body></html>")
		t := time.NewTicker(w.cfg.DripInterval)
		defer t.Stop()
		deadline := time.NewTimer(hostileTimeout)
		defer deadline.Stop()
		for i := 0; ; i = (i + 1) % len(page) {
			if _, err := rw.Write(page[i : i+1]); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			case <-w.done:
				// Cut the connection instead of ending the body
				// cleanly: the client must not take it for a
				// complete response.
				panic(http.ErrAbortHandler)
			case <-deadline.C:
				panic(http.ErrAbortHandler)
			}
		}
	case HostileStall:
		deadline := time.NewTimer(hostileTimeout)
		defer deadline.Stop()
		select {
		case <-ctx.Done():
		case <-w.done:
			// Returning would send an empty 200: cut the connection.
			panic(http.ErrAbortHandler)
		case <-deadline.C:
			panic(http.ErrAbortHandler)
		}
	case HostileEndless:
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		chunk := []byte(strings.Repeat("<p>and it goes on and on and on.</p>\n", 1024))
		for sent := int64(0); sent < w.cfg.EndlessSize; sent += int64(len(chunk)) {
			select {
			case <-ctx.Done():
				return
			case <-w.done:
				panic(http.ErrAbortHandler)
			default:
			}
			if _, err := rw.Write(chunk); err != nil {
				return
			}
		}
	case HostileGzipBomb, HostileBrotliBomb, HostileZstdBomb:
		w.serveBomb(rw, r, kind)
	case HostileRedirectLoop, HostileRedirectLoop + "-2":
		next := "/" + HostileRedirectLoop + "-2"
		if kind != HostileRedirectLoop {
			next = "/" + HostileRedirectLoop
		}
		http.Redirect(rw, r, next, http.StatusFound)
	case HostilePrivateRedirect:
		http.Redirect(rw, r, "http://10.0.0.1/admin", http.StatusFound)
	case HostileMetadataRedirect:
		http.Redirect(rw, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	case HostileWrongLength:
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Length", "100000")
		rw.WriteHeader(http.StatusOK)
		// Returning after a short body makes the server close the
		// connection: the client sees an unexpected EOF.
		const head, tail = "<!DOCTYPE html><html><body><p>", "</p></body></html>"
		_, _ = rw.Write([]byte(head + strings.Repeat("x", 1000-len(head)-len(tail)) + tail))
	case HostileBadCharset:
		hdr.Set("Content-Type", "text/html; charset=x-no-such-charset")
		body := []byte("<!DOCTYPE html><html><head><meta charset=\"x-no-such-charset\"><title>Bad charset</title></head><body><p>Caf\xe9 \xff\xfe\xc3\x28 \xed\xa0\x80 invalid bytes</p><a href=\"/\">home</a></body></html>")
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = rw.Write(body)
	case HostileBinary:
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		body := make([]byte, 64<<10)
		copy(body, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
		x := rng(w.gen.seed)
		for i := 16; i < len(body); i += 8 {
			v := x.next()
			for j := 0; j < 8 && i+j < len(body); j++ {
				body[i+j] = byte(v >> (8 * j))
			}
		}
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = rw.Write(body)
	case HostileHugeHeaders:
		v := strings.Repeat("h", 16<<10)
		for i := 0; i < 256; i++ {
			hdr.Set("X-Filler-"+strconv.Itoa(i), v)
		}
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write([]byte("<!DOCTYPE html><html><body><p>huge headers</p></body></html>"))
	case HostileTooManyRequests:
		hdr.Set("Retry-After", "120")
		http.Error(rw, "too many requests", http.StatusTooManyRequests)
	case HostileUnavailable:
		hdr.Set("Retry-After", w.cfg.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		http.Error(rw, "service unavailable", http.StatusServiceUnavailable)
	default:
		http.NotFound(rw, r)
	}
}

// serveBomb sends a compression bomb of Config.BombSize decompressed bytes.
func (w *Web) serveBomb(rw http.ResponseWriter, r *http.Request, kind string) {
	b := &w.bombs
	size := w.cfg.BombSize
	var unit []byte
	var reps int64
	var enc string
	switch kind {
	case HostileGzipBomb:
		b.once[0].Do(func() {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(make([]byte, min(size, bombUnit)))
			b.gzipErr = zw.Close()
			b.gzipUnit = buf.Bytes()
		})
		if b.gzipErr != nil {
			http.Error(rw, b.gzipErr.Error(), http.StatusInternalServerError)
			return
		}
		// RFC 1952 §2.2: a gzip file is a series of members, and
		// decoders (Go's included) concatenate them.
		unit, reps, enc = b.gzipUnit, (size+bombUnit-1)/bombUnit, "gzip"
	case HostileZstdBomb:
		b.once[1].Do(func() {
			var buf bytes.Buffer
			zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(bombUnit))
			if err != nil {
				b.zstdErr = err
				return
			}
			_, _ = zw.Write(make([]byte, min(size, bombUnit)))
			b.zstdErr = zw.Close()
			b.zstdUnit = buf.Bytes()
		})
		if b.zstdErr != nil {
			http.Error(rw, b.zstdErr.Error(), http.StatusInternalServerError)
			return
		}
		// RFC 8878 §3.1: a zstd stream may hold several frames.
		unit, reps, enc = b.zstdUnit, (size+bombUnit-1)/bombUnit, "zstd"
	default:
		b.once[2].Do(func() {
			// Brotli streams cannot be concatenated, so the whole
			// stream is compressed once (about 0.3 s per GiB).
			var buf bytes.Buffer
			bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 1, LGWin: 24})
			zero := make([]byte, bombUnit)
			for left := size; left > 0; left -= bombUnit {
				if _, err := bw.Write(zero[:min(left, bombUnit)]); err != nil {
					b.brotliErr = err
					return
				}
			}
			b.brotliErr = bw.Close()
			b.brotli = buf.Bytes()
		})
		if b.brotliErr != nil {
			http.Error(rw, b.brotliErr.Error(), http.StatusInternalServerError)
			return
		}
		unit, reps, enc = b.brotli, 1, "br"
	}
	hdr := rw.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Encoding", enc)
	hdr.Set("Content-Length", strconv.FormatInt(int64(len(unit))*reps, 10))
	for i := int64(0); i < reps; i++ {
		if r.Context().Err() != nil {
			return
		}
		if _, err := rw.Write(unit); err != nil {
			return
		}
	}
}
