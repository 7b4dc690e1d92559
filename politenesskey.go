package crawlkit

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// PolitenessByDomain is a Config.PolitenessKey that gives every host of a
// registrable domain (urlnorm.RegistrableDomain: "a.example.co.uk" and
// "b.example.co.uk" share "example.co.uk") one politeness clock. A host
// without one (an IP address keeps its own; "localhost", a public suffix)
// keeps its own clock.
func PolitenessByDomain(u *url.URL) string {
	host := urlnorm.Host(u)
	if d, err := urlnorm.RegistrableDomain(host); err == nil {
		return d
	}
	return host
}

// LookupFunc resolves a host name to its addresses.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// maxAddressKeys bounds the hosts whose address key PolitenessByAddress
// remembers; past it the memory starts again.
const maxAddressKeys = 1 << 17

// PolitenessByAddress returns a Config.PolitenessKey that gives every host
// resolving to one IP address one politeness clock: the key of a host is
// the lowest of the addresses lookup returns for it (nil: the system
// resolver), written as urlnorm writes an address host ("192.0.2.1",
// "[2001:db8::1]"), so a URL naming the address itself shares the clock.
// The first answer for a host is kept (up to 131 072 hosts), so its key
// does not change while the process runs; a host that does not resolve
// within 5 s keeps its own clock. The lookup happens when a URL of a new
// host is admitted, before it is queued.
//
// The key is what the host resolved to when it was first seen, not the
// address a fetch connects to: a host whose DNS answers change, or that
// several processes of one crawl resolve differently (round-robin DNS
// answering one address at a time), may be spaced by another clock than
// the address it reaches.
func PolitenessByAddress(lookup LookupFunc) func(*url.URL) string {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	var mu sync.Mutex
	keys := map[string]string{}
	return func(u *url.URL) string {
		host := urlnorm.Host(u)
		name := u.Hostname()
		if a, err := netip.ParseAddr(name); err == nil {
			return addrKey(a)
		}
		mu.Lock()
		k, ok := keys[host]
		mu.Unlock()
		if ok {
			return k
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		addrs, err := lookup(ctx, name)
		cancel()
		k = host
		if err == nil && len(addrs) > 0 {
			addrs = slices.Clone(addrs)
			for i := range addrs {
				addrs[i] = addrs[i].Unmap()
			}
			k = addrKey(slices.MinFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) }))
		}
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := keys[host]; ok {
			return prev // another caller's answer came first
		}
		if len(keys) >= maxAddressKeys {
			clear(keys)
		}
		keys[host] = k
		return k
	}
}

// addrKey writes an address as urlnorm.Host writes an address host.
func addrKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		return "[" + a.WithZone("").String() + "]"
	}
	return a.String()
}
