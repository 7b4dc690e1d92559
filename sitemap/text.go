package sitemap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// parseText reads the sitemaps.org text format: one URL per line, nothing
// else. Blank lines are skipped and surrounding white space (including the
// CR of CRLF line ends) is trimmed. Lines that are not absolute http(s) URLs
// are counted in Info.Invalid; a document with no such line at all is not a
// URL list, and is reported as ErrUnknownFormat. A last line that the byte
// limit or a read error cuts off before its line end or EOF is not
// delivered.
func (d *doc) parseText(in *bufio.Reader) error {
	nonBlank := 0
	var long bool // inside a line that overflowed the buffer
	for {
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Longer than the buffer, and so far longer than any URL we
			// accept: skip to the end of the line.
			if !long {
				nonBlank++
				d.info.Invalid++
			}
			long = true
			continue
		}
		if err != nil && err != io.EOF {
			// A line cut short by the byte limit or a read error (a
			// truncated gzip stream) is not the URL the document lists.
			return err
		}
		if long {
			long = false
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			nonBlank++
			if len(t) > d.lim.MaxURLLength || !hasHTTPPrefix(t) {
				// What emit would reject, without the string copy and
				// url.Parse: a file of junk lines costs no allocation.
				d.info.Invalid++
			} else if e := d.emit(string(t), Entry{Priority: DefaultPriority}); e != nil {
				return e
			}
		}
		if err == io.EOF {
			break
		}
	}
	if nonBlank > 0 && d.looksValid == 0 {
		return fmt.Errorf("%w: no line is an absolute http(s) URL", ErrUnknownFormat)
	}
	return nil
}

// hasHTTPPrefix reports whether b starts with "http://" or "https://", in
// any case: an absolute http(s) URL with a host, which is all emit accepts,
// always does (url.Parse reads a host only after "scheme://").
func hasHTTPPrefix(b []byte) bool {
	const h, hs = "http://", "https://"
	return len(b) >= len(h) && bytes.EqualFold(b[:len(h)], []byte(h)) ||
		len(b) >= len(hs) && bytes.EqualFold(b[:len(hs)], []byte(hs))
}
