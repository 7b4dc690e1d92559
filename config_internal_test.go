package crawlkit

import "testing"

// The robots.txt product token a User-Agent names (RFC 9309 §2.2.1),
// including the browser-compatible form Googlebot and bingbot use.
func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"examplebot/1.0 (+https://example.com/bot)": "examplebot",
		"examplebot": "examplebot",
		"Mozilla/5.0 (compatible; mybot/1.0; +https://example.com/bot)":                                                                                    "mybot",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                                                                         "Googlebot",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36": "bingbot",
		"Mozilla/5.0 (X11; Linux x86_64)": "Mozilla",
		"Mozilla/5.0 (compatible)":        "Mozilla",
		"my-bot_x/2":                      "my-bot_x",
	} {
		if got := productToken(ua); got != want {
			t.Errorf("productToken(%q) = %q, want %q", ua, got, want)
		}
	}
}
