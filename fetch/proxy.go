package fetch

import (
	"errors"
	"hash/maphash"
	"net/http"
	"net/url"
	"sync/atomic"
)

// Proxy choosers for Config.Proxy: a crawl that goes out through several
// proxies spreads its requests over them, in turn or by host (so that one
// host always sees one address, and a session cookie keeps working).

// ErrNoProxies is returned by RotateProxies and ProxyPerHost given none.
var ErrNoProxies = errors.New("fetch: no proxy URLs")

// RotateProxies returns a Proxy function that hands out proxies in turn,
// one per request.
func RotateProxies(proxies ...*url.URL) (func(*http.Request) (*url.URL, error), error) {
	if len(proxies) == 0 {
		return nil, ErrNoProxies
	}
	var n atomic.Uint64
	return func(*http.Request) (*url.URL, error) {
		return proxies[(n.Add(1)-1)%uint64(len(proxies))], nil
	}, nil
}

// ProxyPerHost returns a Proxy function that sends every request to one
// host through the same proxy, chosen by a hash of the host name.
func ProxyPerHost(proxies ...*url.URL) (func(*http.Request) (*url.URL, error), error) {
	if len(proxies) == 0 {
		return nil, ErrNoProxies
	}
	seed := maphash.MakeSeed()
	return func(r *http.Request) (*url.URL, error) {
		return proxies[maphash.String(seed, r.URL.Hostname())%uint64(len(proxies))], nil
	}, nil
}
