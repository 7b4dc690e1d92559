// Package urlcorpus generates corpora of realistic URLs for tests and
// benchmarks of URL handling code: varied hosts (subdomains, country and
// multi-label suffixes, internationalized names, IP addresses, ports),
// paths (files, directories, dot segments, duplicate slashes, mixed case),
// queries (sorted and unsorted parameters, tracking and session
// parameters, empty values), fragments, percent-encoding (upper- and
// lower-case, needless, UTF-8) and characters that need encoding (spaces,
// non-ASCII).
//
// The output is a pure function of the seed and the count, so benchmarks
// in different modules and runs measure the same inputs.
package urlcorpus

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

var (
	words = []string{
		"news", "sport", "article", "products", "category", "blog", "post", "search",
		"about", "contact", "help", "docs", "api", "v2", "users", "profile", "images",
		"static", "assets", "2024", "03", "world", "tech", "science", "health", "shop",
		"item", "detail", "archive", "tag", "page", "Events", "Download", "FAQ", "en",
		"de", "fr", "jobs", "careers", "press", "media", "video", "music", "forum",
		"thread", "topic", "wiki", "Main_Page", "index", "home", "store", "cart",
	}
	hostWords = []string{
		"example", "acme", "globex", "initech", "umbrella", "hooli", "vandelay",
		"wonka", "stark", "wayne", "tyrell", "cyberdyne", "soylent", "duff",
		"gringotts", "oscorp", "monarch", "aperture", "blackmesa", "nakatomi",
	}
	suffixes = []string{
		"com", "com", "com", "org", "net", "de", "co.uk", "fr", "io", "com.au",
		"co.jp", "info", "edu", "gov", "nl", "ru", "test",
	}
	subdomains = []string{"www", "www", "www", "", "", "blog", "shop", "m", "en", "news", "static", "api"}
	idnHosts   = []string{
		"bücher.de", "пример.рф", "例え.jp", "münchen.de", "straße.de", "café.fr",
		"xn--bcher-kva.de", "ÉCOLE.fr", "παράδειγμα.gr", "مثال.eg",
	}
	extensions = []string{"", "", "", ".html", ".html", ".php", ".aspx", ".jsp", ".htm", ".pdf", ".jpg"}
	params     = []string{
		"id", "page", "q", "sort", "lang", "ref", "category", "p", "s", "limit",
		"offset", "view", "format", "color", "size", "type", "from", "to",
	}
	tracking = []string{
		"utm_source", "utm_medium", "utm_campaign", "utm_content", "gclid",
		"fbclid", "jsessionid", "PHPSESSID", "sid", "_ga",
	}
	values = []string{
		"1", "2", "10", "42", "1337", "asc", "desc", "en", "de", "news", "a+b",
		"hello%20world", "caf%C3%A9", "x%2Fy", "true", "false", "", "red", "XL",
		"2024-03-01", "newsletter", "twitter", "cpc", "abc123DEF",
	}
	rawTexts = []string{"a b", "café", "naïve", "日本", "{x}", "a|b", "100%", "<tag>", "über"}
)

// Generate returns n URLs derived deterministically from seed.
func Generate(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([]string, n)
	var b strings.Builder
	for i := range out {
		b.Reset()
		writeURL(&b, r)
		out[i] = b.String()
	}
	return out
}

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

func chance(r *rand.Rand, percent int) bool { return r.IntN(100) < percent }

func writeURL(b *strings.Builder, r *rand.Rand) {
	switch {
	case chance(r, 2):
		b.WriteString("HTTP://")
	case chance(r, 55):
		b.WriteString("https://")
	default:
		b.WriteString("http://")
	}
	if chance(r, 1) {
		b.WriteString("user:pass@")
	}
	writeHost(b, r)
	if chance(r, 6) {
		ports := []string{":8080", ":80", ":443", ":3000", ":8443"}
		b.WriteString(pick(r, ports))
	}
	writePath(b, r)
	if chance(r, 45) {
		writeQuery(b, r)
	}
	if chance(r, 10) {
		b.WriteByte('#')
		b.WriteString(pick(r, []string{"top", "section-2", "comments", "", "main"}))
	}
}

func writeHost(b *strings.Builder, r *rand.Rand) {
	switch {
	case chance(r, 4):
		b.WriteString(pick(r, idnHosts))
		return
	case chance(r, 2):
		b.WriteString(strconv.Itoa(r.IntN(223) + 1))
		for range 3 {
			b.WriteByte('.')
			b.WriteString(strconv.Itoa(r.IntN(256)))
		}
		return
	case chance(r, 1):
		b.WriteString("[2001:db8::")
		b.WriteString(strconv.FormatInt(int64(r.IntN(0xffff)), 16))
		b.WriteByte(']')
		return
	}
	if sub := pick(r, subdomains); sub != "" {
		if chance(r, 3) {
			sub = strings.ToUpper(sub)
		}
		b.WriteString(sub)
		b.WriteByte('.')
	}
	name := pick(r, hostWords)
	if chance(r, 30) {
		name += "-" + pick(r, hostWords)
	}
	if chance(r, 20) {
		name += strconv.Itoa(r.IntN(100))
	}
	if chance(r, 3) {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	b.WriteString(name)
	b.WriteByte('.')
	b.WriteString(pick(r, suffixes))
	if chance(r, 1) {
		b.WriteByte('.')
	}
}

func writePath(b *strings.Builder, r *rand.Rand) {
	segs := r.IntN(6)
	if segs == 0 && chance(r, 30) {
		return // no path at all: "http://host"
	}
	ext := ""
	for i := 0; i < segs; i++ {
		b.WriteByte('/')
		switch {
		case chance(r, 2):
			b.WriteString(pick(r, []string{".", "..", ""}))
			continue
		case chance(r, 3):
			// needless or lower-case escapes, UTF-8 escapes
			b.WriteString(pick(r, []string{"%7Euser", "%7euser", "caf%c3%a9", "%E6%97%A5%E6%9C%AC", "a%2Fb", "%41bc", "x%20y"}))
			continue
		case chance(r, 2):
			b.WriteString(pick(r, rawTexts))
			continue
		}
		w := pick(r, words)
		if chance(r, 15) {
			w += "-" + pick(r, words)
		}
		if chance(r, 10) {
			w += strconv.Itoa(r.IntN(100000))
		}
		b.WriteString(w)
		if i == segs-1 {
			ext = pick(r, extensions)
			b.WriteString(ext)
		}
	}
	if ext == "" && chance(r, 25) {
		b.WriteByte('/')
	}
}

func writeQuery(b *strings.Builder, r *rand.Rand) {
	b.WriteByte('?')
	n := 1 + r.IntN(4)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte('&')
		}
		if chance(r, 10) {
			b.WriteString(pick(r, tracking))
		} else {
			b.WriteString(pick(r, params))
		}
		if chance(r, 5) {
			continue // a parameter without '='
		}
		b.WriteByte('=')
		b.WriteString(pick(r, values))
	}
}
