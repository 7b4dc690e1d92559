package urlnorm_test

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/crawlkit/crawlkit/urlnorm"
)

func ExampleNormalize() {
	for _, raw := range []string{
		"HTTP://Example.COM:80/a/./b/../Page?utm_source=x&b=2&a=1#top",
		"example.com/search?q=caf%C3%A9",
		"http://bücher.de/%7euser/",
		"mailto:someone@example.com",
		"http://exa mple.com/",
	} {
		n, err := urlnorm.Normalize(raw)
		switch {
		case errors.Is(err, urlnorm.ErrUnsupportedScheme):
			fmt.Println("skip:", raw)
		case err != nil:
			fmt.Println("invalid:", err)
		default:
			fmt.Println(n)
		}
	}
	// Output:
	// http://example.com/a/Page?a=1&b=2
	// http://example.com/search?q=caf%C3%A9
	// http://xn--bcher-kva.de/~user/
	// skip: mailto:someone@example.com
	// invalid: urlnorm: forbidden character ' ' in host: "http://exa mple.com/"
}

func ExampleConfig_Normalize() {
	aggressive := urlnorm.Aggressive()
	n, _ := aggressive.Normalize("https://Example.com/Docs/Index.html")
	fmt.Println(n)
	safeBrowsing := urlnorm.SafeBrowsing()
	s, _ := safeBrowsing.Normalize("http://0x7f.1/%2541/./a//b#frag")
	fmt.Println(s)
	// Output:
	// https://example.com/docs
	// http://127.0.0.1/A/a/b
}

func ExampleResolve() {
	base, _ := url.Parse("http://example.org/foo/bar")
	for _, ref := range []string{"baz?x#y", "../a b", `\\other.example\x`, " /c/./d\t", "?", "mailto:x@example.org"} {
		u, err := urlnorm.Resolve(base, ref)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(u)
	}
	// Output:
	// http://example.org/foo/baz?x#y
	// http://example.org/a%20b
	// http://other.example/x
	// http://example.org/c/d
	// http://example.org/foo/bar?
	// mailto:x@example.org
}

func ExampleKey() {
	n, _ := urlnorm.Normalize("HTTP://WWW.Example.com:80/a?b=2&a=1")
	u, _ := url.Parse(n)
	host := urlnorm.Host(u)
	site, _ := urlnorm.RegistrableDomain(host)
	fmt.Println(n)
	fmt.Println(host, site)
	fmt.Printf("%#016x %#016x\n", urlnorm.Key(n), urlnorm.HostKey(host))
	// Output:
	// http://www.example.com/a?a=1&b=2
	// www.example.com example.com
	// 0x2ae5b54a2bd1ade8 0x774337343878322e
}
