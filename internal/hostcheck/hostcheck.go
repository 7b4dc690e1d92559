// Package hostcheck refuses HTTP requests whose Host header, or Origin
// header when there is one, names neither the address the request came in
// on nor a configured name. It defends a service on a loopback or private
// address against DNS rebinding: a web page that the operator visits can
// make the browser send requests to such an address under the page's own
// host name, and read the answers, but it cannot make the browser send that
// address, or a configured name, as the Host.
//
// The dashboard and the frontier service (packages dashboard and
// service/frontierapi) use it.
package hostcheck

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Checker checks requests against the address they came in on and a list
// of allowed names. The zero value allows the listener's own addresses
// only.
type Checker struct {
	any       bool
	names     map[string]bool // host, any port
	hostports map[string]bool // host:port, as joinHostPort makes it
}

// New returns a Checker that also allows the hosts in allowed: each entry
// is a host name or IP address, which matches with any port, or a
// host:port ([v6]:port), which matches that port only; "*" allows every
// host (no check at all). An entry with a scheme, a path or an invalid
// port is an error.
func New(allowed []string) (*Checker, error) {
	c := &Checker{names: map[string]bool{}, hostports: map[string]bool{}}
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if a == "*" {
			c.any = true
			continue
		}
		host, port, err := split(a)
		if err != nil || host == "" || strings.ContainsAny(host, "/@?#* ") {
			return nil, fmt.Errorf("allowed host %q: want a host name, an IP address or host:port", a)
		}
		if port == "" {
			c.names[host] = true
		} else {
			c.hostports[net.JoinHostPort(host, port)] = true
		}
	}
	return c, nil
}

// ErrForbidden is wrapped by the errors of Check.
var ErrForbidden = errors.New("forbidden host")

// Check returns nil if r may be served: its Host, and its Origin when it
// has one, each name an address the request came in on (for a loopback
// address, also localhost or any loopback IP, with that port) or an allowed
// host. The address is the connection's local address, which net/http's
// Server records in the request's context (http.LocalAddrContextKey). A
// request without a TCP local address (a handler called directly, as in a
// test, or a server over a Unix socket) is checked against the allowed
// hosts only, and passes when there are none: there is nothing to check it
// against.
func (c *Checker) Check(r *http.Request) error {
	if c.any {
		return nil
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if local == nil && len(c.names) == 0 && len(c.hostports) == 0 {
		return nil
	}
	defPort := "80"
	if r.TLS != nil {
		defPort = "443"
	}
	if !c.allowed(r.Host, defPort, local) {
		return fmt.Errorf("%w: Host %q is not an address of this server nor an allowed host", ErrForbidden, r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: Origin %q is not allowed", ErrForbidden, origin)
	}
	defPort = "80"
	if u.Scheme == "https" {
		defPort = "443"
	}
	if !c.allowed(u.Host, defPort, local) {
		return fmt.Errorf("%w: Origin %q is not an address of this server nor an allowed host", ErrForbidden, origin)
	}
	return nil
}

// allowed reports whether hostport (a Host header's form) names local or
// an allowed host.
func (c *Checker) allowed(hostport, defPort string, local *net.TCPAddr) bool {
	host, port, err := split(hostport)
	if err != nil || host == "" {
		return false
	}
	if port == "" {
		port = defPort
	}
	if c.names[host] || c.hostports[net.JoinHostPort(host, port)] {
		return true
	}
	if local == nil || port != strconv.Itoa(local.Port) {
		return false
	}
	lip, ok := netip.AddrFromSlice(local.IP)
	if !ok {
		return false
	}
	lip = lip.Unmap().WithZone("")
	ip, err := netip.ParseAddr(host)
	if lip.IsLoopback() {
		return host == "localhost" || (err == nil && ip.Unmap().IsLoopback())
	}
	return err == nil && ip.Unmap().WithZone("") == lip
}

// split splits a Host header's host[:port] into a lower-case host without
// brackets or trailing dot, and a port ("" when absent).
func split(hostport string) (host, port string, err error) {
	switch {
	case strings.HasPrefix(hostport, "["):
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", errors.New("missing ]")
		}
		host, rest := hostport[1:end], hostport[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", "", errors.New("junk after ]")
			}
			port = p
		}
		if _, err := netip.ParseAddr(host); err != nil {
			return "", "", err
		}
		hostport = host
	case strings.Count(hostport, ":") == 1:
		hostport, port, _ = strings.Cut(hostport, ":")
	case strings.Count(hostport, ":") > 1:
		// A bare IPv6 address, as in an allowed-host entry.
		if _, err := netip.ParseAddr(hostport); err != nil {
			return "", "", err
		}
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", "", fmt.Errorf("port %q", port)
		}
	}
	host = strings.TrimSuffix(strings.ToLower(hostport), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	return host, port, nil
}
