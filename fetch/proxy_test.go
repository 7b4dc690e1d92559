package fetch_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/crawlkit/crawlkit/fetch"
)

func TestProxyChoosers(t *testing.T) {
	p1, _ := url.Parse("http://127.0.0.1:3128")
	p2, _ := url.Parse("socks5://127.0.0.1:1080")
	req := func(host string) *http.Request {
		r, _ := http.NewRequest("GET", "http://"+host+"/", nil)
		return r
	}
	rot, err := fetch.RotateProxies(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 4; i++ {
		u, _ := rot(req("a.test"))
		got = append(got, u.Scheme)
	}
	if fmt.Sprint(got) != "[http socks5 http socks5]" {
		t.Errorf("RotateProxies gave %v", got)
	}
	per, err := fetch.ProxyPerHost(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for i := 0; i < 40; i++ {
		host := fmt.Sprintf("h%d.test", i)
		first, _ := per(req(host))
		again, _ := per(req(host))
		if first != again {
			t.Errorf("%s went through %v, then %v", host, first, again)
		}
		used[first.String()] = true
	}
	if len(used) != 2 {
		t.Errorf("40 hosts used %d proxies, want both", len(used))
	}
	if _, err := fetch.RotateProxies(); !errors.Is(err, fetch.ErrNoProxies) {
		t.Errorf("RotateProxies(): %v", err)
	}
	if _, err := fetch.ProxyPerHost(); !errors.Is(err, fetch.ErrNoProxies) {
		t.Errorf("ProxyPerHost(): %v", err)
	}
}
