package sitemap

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// gzipSlack is how much larger than Parser.MaxBytes the compressed stream may
// be: gzip adds a few bytes of framing per stored block, so incompressible
// content just under the cap can be slightly larger compressed. Without a cap
// on the compressed side, an endless run of empty gzip members would keep the
// parser reading forever while producing no output.
const gzipSlack = 64 << 10

// doc is the state of one Parse call.
type doc struct {
	lim   Parser
	scope scope
	base  *url.URL // the document's own URL, against which feed links resolve
	fn    func(Entry) error
	info  Info
	// looksValid counts candidate URLs that parsed as absolute http(s) URLs,
	// in or out of scope; the text format uses it to tell a URL list from
	// arbitrary text.
	looksValid int
}

// callbackError carries an error returned by the caller's function, so Parse
// can hand it back unwrapped.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

func (d *doc) run(r io.Reader) error {
	raw := &limitReader{r: r, remaining: d.lim.MaxBytes + gzipSlack, limit: d.lim.MaxBytes + gzipSlack}
	br := bufio.NewReaderSize(raw, 32<<10)
	var body io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return d.fail(fmt.Errorf("%w: gzip: %w", ErrMalformed, err))
		}
		defer gz.Close()
		gz.Multistream(false)
		d.info.Compressed = true
		body = &gzipMembers{br: br, gz: gz}
	}
	dec := &limitReader{r: body, remaining: d.lim.MaxBytes, limit: d.lim.MaxBytes}
	defer func() { d.info.Bytes = dec.read }()
	// The buffer holds a whole text-format line of the longest URL accepted.
	bufSize := max(32<<10, d.lim.MaxURLLength+1024)
	in := bufio.NewReaderSize(dec, bufSize)

	first, bom, err := sniff(in)
	if err != nil {
		return d.fail(err)
	}
	if bom == bomUTF16 {
		// The rest of the parser works on UTF-8; UseBOM consumes the BOM and
		// picks the byte order from it.
		t := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder()
		in = bufio.NewReaderSize(transform.NewReader(in, t), bufSize)
		if first, _, err = sniff(in); err != nil {
			return d.fail(err)
		}
	}
	if first == '<' {
		err = d.parseXML(in, bom != bomNone)
		if err == nil && d.info.Compressed {
			// The document ended at its root element, but the gzip
			// length and CRC-32 that follow still say whether the stream
			// is complete and intact: read them.
			if _, err = io.Copy(io.Discard, dec); err != nil && !errors.Is(err, ErrTooLarge) {
				err = fmt.Errorf("%w: gzip stream after the root element: %w", ErrMalformed, err)
			}
		}
	} else {
		d.info.Format = FormatText
		err = d.parseText(in)
	}
	return d.fail(err)
}

// fail maps an error to what Parse returns: the caller's own error unwrapped,
// the package's own errors as they are, anything else (a corrupt or
// truncated gzip stream, a read error) wrapped in ErrMalformed.
func (d *doc) fail(err error) error {
	var cb *callbackError
	if errors.As(err, &cb) {
		return cb.err
	}
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{ErrMalformed, ErrTooLarge, ErrTooManyURLs, ErrUnknownFormat, ErrInvalidSource} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// byteOrderMark is the byte-order mark a document starts with.
type byteOrderMark uint8

const (
	bomNone byteOrderMark = iota
	bomUTF8
	bomUTF16
)

// sniff skips a UTF-8 byte-order mark and leading white space, and returns
// the first significant byte without consuming it. A UTF-16 byte-order mark
// is left in place for the decoder.
func sniff(in *bufio.Reader) (first byte, bom byteOrderMark, err error) {
	if b, _ := in.Peek(3); len(b) >= 2 {
		switch {
		case len(b) == 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
			in.Discard(3)
			bom = bomUTF8
		case (b[0] == 0xFE && b[1] == 0xFF) || (b[0] == 0xFF && b[1] == 0xFE):
			return 0, bomUTF16, nil
		}
	}
	for {
		c, err := in.ReadByte()
		if err == io.EOF {
			return 0, bom, fmt.Errorf("%w: empty document", ErrUnknownFormat)
		}
		if err != nil {
			return 0, bom, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		in.UnreadByte()
		return c, bom, nil
	}
}

// gzipMembers reads the members of a gzip stream one after another, each
// checked against its CRC-32 and length. Bytes after the last complete
// member that do not start another member are ignored, as gzip(1) does: some
// servers pad responses with zeros or append junk. A member cut short, or a
// corrupt one, is an error.
type gzipMembers struct {
	br *bufio.Reader
	gz *gzip.Reader // with Multistream(false)
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.gz.Read(p)
		if err != io.EOF {
			return n, err
		}
		magic, perr := g.br.Peek(2)
		if len(magic) < 2 {
			if perr != nil && perr != io.EOF {
				return n, perr // a read error or the byte limit, not the end
			}
			return n, io.EOF
		}
		if magic[0] != 0x1f || magic[1] != 0x8b {
			return n, io.EOF // trailing bytes, not a gzip member
		}
		if err := g.gz.Reset(g.br); err != nil {
			return n, err
		}
		g.gz.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

// emit validates a candidate URL and delivers it. raw has been trimmed.
func (d *doc) emit(raw string, e Entry) error {
	if raw == "" || len(raw) > d.lim.MaxURLLength {
		d.info.Invalid++
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		d.info.Invalid++
		return nil
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		d.info.Invalid++
		return nil
	}
	d.looksValid++
	if !d.scope.allows(u, e.Kind) {
		d.info.OutOfScope++
		return nil
	}
	if d.info.Pages+d.info.Sitemaps >= d.lim.MaxURLs {
		return fmt.Errorf("%w (%d)", ErrTooManyURLs, d.lim.MaxURLs)
	}
	if e.Kind == KindSitemap {
		d.info.Sitemaps++
	} else {
		d.info.Pages++
	}
	e.URL = raw
	if err := d.fn(e); err != nil {
		return &callbackError{err}
	}
	return nil
}

// limitReader passes at most limit bytes through and then fails with
// ErrTooLarge if the underlying stream has more; a stream of exactly limit
// bytes reads cleanly to EOF.
type limitReader struct {
	r         io.Reader
	remaining int64
	limit     int64
	read      int64
	err       error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.remaining <= 0 {
		var probe [1]byte
		for range 100 {
			n, err := l.r.Read(probe[:])
			if n > 0 {
				l.err = fmt.Errorf("%w (%d bytes)", ErrTooLarge, l.limit)
				return 0, l.err
			}
			if err != nil {
				return 0, err
			}
		}
		return 0, io.ErrNoProgress
	}
	if int64(len(p)) > l.remaining {
		p = p[:l.remaining]
	}
	n, err := l.r.Read(p)
	l.remaining -= int64(n)
	l.read += int64(n)
	return n, err
}
