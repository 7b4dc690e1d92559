package fetch

import (
	"crypto/tls"
	"net/http"
	"strconv"
	"strings"
)

// Wire is a response as it was received, for an archive (Config.KeepWire):
// a WARC response record holds the HTTP message as it came over the
// connection, content codings intact (WARC 1.1 section 6.3.2, the payload
// is the entity body as transferred), where Response.Body is decoded.
type Wire struct {
	// Proto is the protocol of the response, as net/http gives it
	// ("HTTP/1.1", "HTTP/2.0").
	Proto string
	// Reason is the status line's reason phrase as the server sent it
	// (HTTP/1.x; for HTTP/2, which has none, net/http's text for the
	// code).
	Reason string
	// TransferEncoding lists the transfer codings the body came with
	// ("chunked"), which net/http removes from the header and the body.
	TransferEncoding []string
	// TLS describes the connection's TLS session; nil for plain HTTP.
	TLS *tls.ConnectionState
	// Body is the body as received: transfer codings removed (de-chunked,
	// RFC 9112 section 7.1), content codings kept (RFC 9110 section 8.4).
	// Without a content coding it is Response.Body itself (the same
	// array), so keeping it costs nothing; with one, the encoded bytes
	// are kept while the decoder reads them, at most Config.MaxBodyBytes
	// of them. It is nil for a redirect hop, whose body is not kept.
	Body []byte
	// Truncated reports that Body is not the whole body the server sent:
	// the body was over Config.MaxBodyBytes, or the decoder ended before
	// the body did and the rest was not read (bytes after a compressed
	// stream of unknown length). An archive records it as WARC-Truncated.
	Truncated bool
}

// newWire describes hresp as received, without its body.
func newWire(hresp *http.Response) *Wire {
	reason := strings.TrimSpace(strings.TrimPrefix(hresp.Status, strconv.Itoa(hresp.StatusCode)))
	if reason == "" {
		reason = http.StatusText(hresp.StatusCode)
	}
	return &Wire{Proto: hresp.Proto, Reason: reason, TransferEncoding: hresp.TransferEncoding, TLS: hresp.TLS}
}

// wireKeeper keeps the bytes a wireCounter reads, up to max of them.
type wireKeeper struct {
	buf      []byte
	max      int64
	overflow bool // more than max bytes were read
}

// keep appends p, or as much of it as fits under max.
func (k *wireKeeper) keep(p []byte) {
	if left := k.max - int64(len(k.buf)); int64(len(p)) > left {
		p = p[:max(left, 0)]
		k.overflow = true
	}
	if len(p) == 0 {
		return
	}
	if need := len(k.buf) + len(p); need > cap(k.buf) {
		// Double, but never past max: the kept bytes cost at most the
		// body limit.
		nc := int64(max(2*cap(k.buf), need, 4096))
		nb := make([]byte, len(k.buf), min(nc, k.max))
		copy(nb, k.buf)
		k.buf = nb
	}
	k.buf = append(k.buf, p...)
}
