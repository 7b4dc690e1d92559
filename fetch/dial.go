package fetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// DialFunc is the shape of net.Dialer.DialContext and of
// http.Transport.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// guardedDialer is the Fetcher's dial function: it resolves through the DNS
// cache and applies the address guard to every address before dialling it,
// or, with a custom dial function, to the connection's remote address
// before anything is written.
type guardedDialer struct {
	guard  *Guard // nil: guard off
	dns    *DNSCache
	custom DialFunc
	net    net.Dialer
	// dialIP replaces net.DialContext for addresses that passed the guard;
	// tests set it to prove that refused addresses are never dialled.
	dialIP DialFunc
}

// DialContext implements DialFunc.
func (d *guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	literal, litErr := netip.ParseAddr(host)
	if litErr == nil {
		// An IP literal can be refused before any dial, custom or not.
		if err := d.guard.Check(host, literal); err != nil {
			return nil, err
		}
	}
	if d.custom != nil {
		if d.net.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d.net.Timeout)
			defer cancel()
		}
		t0 := time.Now()
		conn, err := d.custom(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := d.checkConn(host, conn); err != nil {
			conn.Close()
			return nil, err
		}
		traceFrom(ctx).dial(0, time.Since(t0))
		return conn, nil
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("fetch: bad port in %q", addr)
	}
	addrs := []netip.Addr{literal}
	var dnsTime time.Duration
	if litErr != nil {
		t0 := time.Now()
		trace := httptrace.ContextClientTrace(ctx)
		if trace != nil && trace.DNSStart != nil {
			trace.DNSStart(httptrace.DNSStartInfo{Host: host})
		}
		addrs, err = d.dns.Lookup(ctx, host)
		dnsTime = time.Since(t0)
		if trace != nil && trace.DNSDone != nil {
			trace.DNSDone(httptrace.DNSDoneInfo{Err: err})
		}
		if err != nil {
			return nil, err
		}
	}
	var firstErr error
	for _, a := range addrs {
		if err := d.guard.Check(host, a); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		dial := d.net.DialContext
		if d.dialIP != nil {
			dial = d.dialIP
		}
		t0 := time.Now()
		conn, err := dial(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		connectTime := time.Since(t0)
		if litErr != nil {
			d.dns.ReportConnect(host, err)
		}
		if err != nil {
			firstErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		// Check what was actually reached, in case the dialler was redirected.
		if err := d.checkConn(host, conn); err != nil {
			conn.Close()
			return nil, err
		}
		traceFrom(ctx).dial(dnsTime, connectTime)
		return conn, nil
	}
	return nil, firstErr
}

// wrapProxy wraps a transport's Proxy function so that a request sent
// through a proxy is known to be (its connection's address is the proxy's,
// not the server's) and, with the guard on, must pass the guard with its
// target first: the dialler only sees the proxy's address.
func (d *guardedDialer) wrapProxy(proxy func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		pu, err := proxy(r)
		if err != nil || pu == nil {
			return pu, err
		}
		traceFrom(r.Context()).setProxied()
		if d.guard == nil {
			return pu, nil
		}
		if err := d.checkTarget(r.Context(), r.URL.Hostname()); err != nil {
			return nil, err
		}
		return pu, nil
	}
}

// checkTarget applies the guard to host, an IP literal or a name resolved
// through the DNS cache; every address of a name must pass, since the proxy
// may connect to any of them.
func (d *guardedDialer) checkTarget(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return d.guard.Check(host, a)
	}
	addrs, err := d.dns.Lookup(ctx, host)
	if err != nil {
		return fmt.Errorf("fetch: resolving %s to check it with the address guard before using the proxy: %w", host, err)
	}
	for _, a := range addrs {
		if err := d.guard.Check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// checkConn applies the guard to conn's remote address.
func (d *guardedDialer) checkConn(host string, conn net.Conn) error {
	if d.guard == nil {
		return nil
	}
	ap, err := remoteAddrPort(conn)
	if err != nil {
		return &BlockedAddressError{Host: host, Reason: "unverifiable (" + err.Error() + ")"}
	}
	return d.guard.Check(host, ap.Addr())
}

// remoteAddrPort returns conn's remote IP address and port.
func remoteAddrPort(conn net.Conn) (netip.AddrPort, error) {
	ra := conn.RemoteAddr()
	if ra == nil {
		return netip.AddrPort{}, fmt.Errorf("no remote address")
	}
	if tcp, ok := ra.(*net.TCPAddr); ok {
		return tcp.AddrPort(), nil
	}
	ap, err := netip.ParseAddrPort(ra.String())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("remote address %q is not IP", ra.String())
	}
	return ap, nil
}

// defaultDialer returns the net.Dialer the Fetcher dials with.
func defaultDialer(connectTimeout time.Duration) net.Dialer {
	return net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
}
