package fetch

import (
	"errors"
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"ff02::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fd00::1", true},
		{"fc00::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:8.8.8.8", false},
		{"::127.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", false},  // NAT64 of 8.8.8.8
		{"2002:7f00:1::", true},      // 6to4 of 127.0.0.1
		{"2002:808:808::", false},
		{"2001:db8::1", true},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true},  // Teredo, client 127.0.0.1 (obfuscated)
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", true},  // Teredo, client 10.0.0.1
		{"2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", true},  // Teredo, server 169.254.169.254, client 8.8.8.8
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false}, // Teredo, server 65.54.227.120, client 8.8.8.8
		{"2001:2::1", true},                             // IPv6 benchmarking, RFC 5180
		{"3fff::1", true},                               // IPv6 documentation, RFC 9637
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		{"2606:4700:4700::1111", false},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		got := Classify(a) != ""
		if got != c.blocked {
			t.Errorf("Classify(%s) = %q, want blocked=%v", c.addr, Classify(a), c.blocked)
		}
	}
}

func TestGuardAllowList(t *testing.T) {
	g := NewGuard(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.20.0.0/16"))
	for _, s := range []string{"127.0.0.1", "::ffff:127.0.0.1", "10.20.3.4"} {
		if err := g.Check("h", netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", s, err)
		}
	}
	for _, s := range []string{"10.21.0.1", "::1", "169.254.169.254"} {
		err := g.Check("h", netip.MustParseAddr(s))
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("Check(%s) = %v, want ErrBlockedAddress", s, err)
		}
		var be *BlockedAddressError
		if !errors.As(err, &be) || be.Reason == "" || be.Addr != netip.MustParseAddr(s) {
			t.Errorf("Check(%s) error %#v lacks address or reason", s, err)
		}
	}
	var off *Guard
	if err := off.Check("h", netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("nil guard refused: %v", err)
	}
}
