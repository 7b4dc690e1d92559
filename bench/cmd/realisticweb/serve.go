package main

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// web answers the synthetic hosts.
type web struct {
	s       *site
	bodies  []encoded
	j       *judge
	hostIdx map[string]int
	// latency draws a response's delay; count counts page requests
	// (cheap, for /count).
	latency func() time.Duration
	count   atomic.Int64
}

// knows reports whether name is a host this server answers for.
func (w *web) knows(name string) bool {
	_, ok := w.hostIdx[name]
	return ok || name == assetHost
}

// drawLatency is a server's time to answer: log-normal with median 60 ms
// and σ 0.6, within 20–300 ms.
func drawLatency() time.Duration {
	ms := 60 * math.Exp(0.6*rand.NormFloat64())
	return time.Duration(min(max(ms, 20), 300) * float64(time.Millisecond))
}

func (w *web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.j.request(r.Proto)
	name := strings.ToLower(r.Host)
	if h, p, err := net.SplitHostPort(name); err == nil && p == "443" {
		name = h
	}
	name = strings.TrimSuffix(name, ".")
	h, ok := w.hostIdx[name]
	if !ok {
		w.j.offWebRequest()
		time.Sleep(w.latency())
		http.NotFound(rw, r)
		return
	}
	if r.URL.Path == "/robots.txt" {
		w.j.robotsRequest(h)
		time.Sleep(w.latency())
		text := w.s.hosts[h].robots.text()
		if text == "" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(rw, text)
		return
	}
	w.count.Add(1)
	id := w.s.lookup("https://" + name + r.RequestURI)
	end := w.j.begin(h, "https://"+r.Host+r.RequestURI, id)
	time.Sleep(w.latency())
	end()
	if id < 0 {
		http.NotFound(rw, r)
		return
	}
	body, enc := w.encodingFor(r.Header.Get("Accept-Encoding"), id)
	hd := rw.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Vary", "Accept-Encoding")
	hd.Set("Cache-Control", "max-age=60")
	if enc != "identity" {
		hd.Set("Content-Encoding", enc)
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	n, _ := rw.Write(body)
	w.j.sent(enc, n, w.s.pages[id].size)
}

// encodingFor picks the body a real server would send for the request's
// Accept-Encoding: brotli when it is accepted, else gzip, else none (the
// gzip body decoded, which costs this server, but no crawler under test
// asks for it).
func (w *web) encodingFor(accept string, id int) ([]byte, string) {
	e := w.bodies[id]
	switch {
	case accepts(accept, "br"):
		return e.br, "br"
	case accepts(accept, "gzip"):
		return e.gz, "gzip"
	}
	zr, err := gzip.NewReader(bytes.NewReader(e.gz))
	if err != nil {
		return nil, "identity"
	}
	b, _ := io.ReadAll(zr)
	return b, "identity"
}

// accepts reports whether an Accept-Encoding value accepts coding with a
// non-zero q.
func accepts(header, coding string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), coding) {
			continue
		}
		params = strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}
